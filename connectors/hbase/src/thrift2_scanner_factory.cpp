#include "hbingest/connectors/thrift2_scanner_factory.h"

#include <condition_variable>
#include <mutex>
#include <spdlog/spdlog.h>

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

class ConnectionPool {
 public:
  ConnectionPool(const Thrift2Options& options, int size) {
    for (int i = 0; i < size; ++i) {
      idle_.push_back(std::make_unique<Thrift2Connection>(options, static_cast<std::size_t>(i)));
    }
  }

  std::unique_ptr<Thrift2Connection> acquire() {
    std::unique_lock lock(mutex_);
    available_.wait(lock, [&] { return !idle_.empty(); });
    auto connection = std::move(idle_.back());
    idle_.pop_back();
    return connection;
  }

  void release(std::unique_ptr<Thrift2Connection> connection) {
    {
      std::lock_guard lock(mutex_);
      idle_.push_back(std::move(connection));
    }
    available_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable available_;
  std::vector<std::unique_ptr<Thrift2Connection>> idle_;
};

class Thrift2RowScanner final : public RowScanner {
 public:
  Thrift2RowScanner(ConnectionPool& pool, std::atomic<std::size_t>& open_count, const ScanRequest& request)
      : pool_(pool), open_count_(open_count), request_(request), connection_(pool.acquire()) {
    try {
      open();
    } catch (...) {
      pool_.release(std::move(connection_));
      throw;
    }
  }

  ~Thrift2RowScanner() override { close(); }

  std::vector<ScannedRow> next_chunk() override {
    std::vector<ScannedRow> rows;
    while (!exhausted_ && rows.empty()) {
      std::vector<gen::TResult> results;
      connection_->call("getScannerRows",
                        [&](auto& client) { client.getScannerRows(results, scanner_id_, request_.chunk_rows); });
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
    if (!connection_) return;
    if (scanner_open_) {
      scanner_open_ = false;
      --open_count_;
      try {
        connection_->call("closeScanner", [&](auto& client) { client.closeScanner(scanner_id_); });
      } catch (const std::exception& e) {
        // The server expires abandoned scanners after its lease timeout; say so and move on.
        spdlog::warn("closing HBase scanner {} failed (the server will expire it): {}", scanner_id_, e.what());
      }
    }
    pool_.release(std::move(connection_));
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
      scan.__set_columns(std::move(columns));
    }
    scanner_id_ = connection_->call("openScanner", [&](auto& client) { return client.openScanner(request_.table, scan); });
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
  std::unique_ptr<Thrift2Connection> connection_;  // returned to the pool by close()
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
