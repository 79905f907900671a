#include "hbingest/connectors/thrift2_scanner_factory.h"

#include <spdlog/spdlog.h>
#include <condition_variable>
#include <map>
#include <mutex>

#include "thrift2_connection.h"
#include "thrift2_conversions.h"

namespace hbingest::connectors {

namespace {

namespace gen = thrift2::gen;

// The largest key strictly below every key >= `start` is not representable, so a reversed scan
// (whose stop row is exclusive from below) stops at a key just under `start` and the scanner drops
// the few rows that lie between it and `start`.
std::string reversed_stop_row(const std::string& start) {
  if (start.empty()) return {};
  std::string stop = start;
  if (static_cast<unsigned char>(stop.back()) == 0) {
    stop.pop_back();
  } else {
    stop.back() = static_cast<char>(static_cast<unsigned char>(stop.back()) - 1);
  }
  return stop;
}

// Connections per endpoint, at most `max_connections` in all. A scanner borrows one for each call
// only: HBase's Thrift2 server keeps scanners server-wide, not per connection, so a time-ordered
// merge can keep all n bucket scanners open while only `max_connections` calls run at once.
class ConnectionPool {
 public:
  ConnectionPool(const Thrift2Options& options, int max_connections)
      : options_(options), max_connections_(static_cast<std::size_t>(max_connections)) {}

  class Lease {
   public:
    Lease(ConnectionPool& pool, std::size_t endpoint)
        : pool_(pool), endpoint_(endpoint), connection_(pool.acquire(endpoint)) {}
    ~Lease() { pool_.release(endpoint_, std::move(connection_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Thrift2Connection& operator*() { return *connection_; }
    Thrift2Connection* operator->() { return connection_.get(); }

   private:
    ConnectionPool& pool_;
    std::size_t endpoint_;
    std::unique_ptr<Thrift2Connection> connection_;
  };

  std::size_t endpoints() const { return options_.endpoints.size(); }
  std::size_t next_endpoint() { return next_endpoint_++ % options_.endpoints.size(); }

 private:
  std::unique_ptr<Thrift2Connection> acquire(std::size_t endpoint) {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !idle_[endpoint].empty() || total_ < max_connections_ || any_idle(); });
    if (!idle_[endpoint].empty()) {
      auto connection = std::move(idle_[endpoint].back());
      idle_[endpoint].pop_back();
      return connection;
    }
    if (total_ >= max_connections_) drop_one_idle();  // make room: close a connection to another endpoint
    ++total_;
    Thrift2Options single = options_;
    single.endpoints = {options_.endpoints[endpoint]};  // affinity: a scanner lives on one server
    return std::make_unique<Thrift2Connection>(std::move(single));
  }

  void release(std::size_t endpoint, std::unique_ptr<Thrift2Connection> connection) {
    {
      std::lock_guard lock(mutex_);
      idle_[endpoint].push_back(std::move(connection));
    }
    available_.notify_all();
  }

  bool any_idle() const {
    for (const auto& [endpoint, idle] : idle_) {
      if (!idle.empty()) return true;
    }
    return false;
  }

  void drop_one_idle() {
    for (auto& [endpoint, idle] : idle_) {
      if (!idle.empty()) {
        idle.pop_back();
        --total_;
        return;
      }
    }
  }

  Thrift2Options options_;
  std::size_t max_connections_;
  std::mutex mutex_;
  std::condition_variable available_;
  std::map<std::size_t, std::vector<std::unique_ptr<Thrift2Connection>>> idle_;
  std::size_t total_ = 0;
  std::atomic<std::size_t> next_endpoint_{0};
};

class Thrift2RowScanner final : public RowScanner {
 public:
  Thrift2RowScanner(ConnectionPool& pool, std::atomic<std::size_t>& open_count, const ScanRequest& request)
      : pool_(pool), open_count_(open_count), request_(request) {
    open();
  }

  ~Thrift2RowScanner() override { close(); }

  std::vector<ScannedRow> next_chunk() override {
    std::vector<ScannedRow> rows;
    while (!exhausted_ && rows.empty()) {
      std::vector<gen::TResult> results;
      {
        ConnectionPool::Lease connection(pool_, endpoint_);
        connection->call("getScannerRows",
                         [&](auto& client) { client.getScannerRows(results, scanner_id_, request_.chunk_rows); });
      }
      if (results.empty()) {
        exhausted_ = true;
        break;
      }
      rows.reserve(results.size());
      for (auto& result : results) {
        if (!accept(result.row)) continue;
        rows.push_back(from_thrift_result(std::move(result)));
      }
    }
    if (exhausted_) close();
    return rows;
  }

  void close() noexcept override {
    if (!scanner_open_) return;
    scanner_open_ = false;
    --open_count_;
    try {
      ConnectionPool::Lease connection(pool_, endpoint_);
      connection->call("closeScanner", [&](auto& client) { client.closeScanner(scanner_id_); });
    } catch (const std::exception& e) {
      // The server expires abandoned scanners after its lease timeout; say so and move on.
      spdlog::warn("closing HBase scanner {} failed (the server will expire it): {}", scanner_id_, e.what());
    }
  }

 private:
  void open() {
    gen::TScan scan;
    if (request_.reversed) {
      scan.__set_reversed(true);
      if (!request_.stop_row.empty()) scan.__set_startRow(request_.stop_row);
      const auto stop = reversed_stop_row(request_.start_row);
      if (!stop.empty()) scan.__set_stopRow(stop);
    } else {
      if (!request_.start_row.empty()) scan.__set_startRow(request_.start_row);
      if (!request_.stop_row.empty()) scan.__set_stopRow(request_.stop_row);
    }
    scan.__set_caching(request_.chunk_rows);
    scan.__set_maxVersions(1);
    if (!request_.columns.empty()) {
      std::vector<gen::TColumn> columns;
      for (const auto& column : request_.columns) columns.push_back(to_thrift_column(column));
      scan.__set_columns(columns);
    }
    // No scanner exists yet, so a transport failure may move on to the next endpoint.
    for (std::size_t attempt = 0;; ++attempt) {
      endpoint_ = pool_.next_endpoint();
      try {
        ConnectionPool::Lease connection(pool_, endpoint_);
        scanner_id_ =
            connection->call("openScanner", [&](auto& client) { return client.openScanner(request_.table, scan); });
        break;
      } catch (const HBaseError& e) {
        if (!e.retriable() || attempt + 1 >= pool_.endpoints()) throw;
      }
    }
    scanner_open_ = true;
    ++open_count_;
  }

  // Keeps a reversed scan inside [start, stop): its server-side bounds are one key too wide on each end.
  bool accept(const std::string& row) {
    if (!request_.reversed) return true;
    if (!request_.stop_row.empty() && row >= request_.stop_row) return false;
    if (row < request_.start_row) {
      exhausted_ = true;  // descending order: everything after this is below the range too
      return false;
    }
    return true;
  }

  ConnectionPool& pool_;
  std::atomic<std::size_t>& open_count_;
  ScanRequest request_;
  std::size_t endpoint_ = 0;
  std::int32_t scanner_id_ = 0;
  bool scanner_open_ = false;
  bool exhausted_ = false;
};

class Thrift2ScannerFactoryImpl final : public Thrift2ScannerFactory {
 public:
  Thrift2ScannerFactoryImpl(const Thrift2Options& options, int max_connections) : pool_(options, max_connections) {}

  std::unique_ptr<RowScanner> open(const ScanRequest& request) override {
    return std::make_unique<Thrift2RowScanner>(pool_, open_count_, request);
  }

  std::size_t open_scanners() const override { return open_count_.load(); }

 private:
  ConnectionPool pool_;
  std::atomic<std::size_t> open_count_{0};
};

}  // namespace

std::unique_ptr<Thrift2ScannerFactory> make_thrift2_scanner_factory(const Thrift2Options& options,
                                                                    int max_connections) {
  if (max_connections < 1) throw std::invalid_argument("scanner pool needs at least one connection");
  return std::make_unique<Thrift2ScannerFactoryImpl>(options, max_connections);
}

}  // namespace hbingest::connectors
