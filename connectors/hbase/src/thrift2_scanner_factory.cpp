#include "hbingest/connectors/thrift2_scanner_factory.h"

#include <spdlog/spdlog.h>
#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "ordered_waiters.h"
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
// only, so a time-ordered merge can have all n buckets in progress while only `max_connections`
// calls run at once. Calls waiting for a connection get one in order of their scan's priority (the
// query's start: oldest query first), see OrderedWaiters.
class ConnectionPool {
 public:
  ConnectionPool(const Thrift2Options& options, int max_connections)
      : options_(options), max_connections_(static_cast<std::size_t>(max_connections)) {}

  // fresh: a new connection, never one from the idle list.
  enum class Pick { any, fresh };

  class Lease {
   public:
    Lease(ConnectionPool& pool, std::size_t endpoint, Pick pick, std::uint64_t priority)
        : pool_(pool), endpoint_(endpoint), connection_(pool.acquire(endpoint, pick, priority)) {}
    ~Lease() { pool_.release(endpoint_, std::move(connection_), fate_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Thrift2Connection& operator*() { return *connection_; }
    Thrift2Connection* operator->() { return connection_.get(); }
    // This connection is not put back (it was interrupted).
    void discard() {
      if (fate_ == Fate::keep) fate_ = Fate::drop;
    }
    // Its socket failed under it: neither it nor the idle connections to the same endpoint, which
    // a restarted gateway has closed just the same, are put back.
    void discard_endpoint() { fate_ = Fate::drop_endpoint; }

   private:
    ConnectionPool& pool_;
    std::size_t endpoint_;
    std::unique_ptr<Thrift2Connection> connection_;
    enum class Fate { keep, drop, drop_endpoint };
    Fate fate_ = Fate::keep;
    friend class ConnectionPool;
  };

  std::size_t endpoints() const { return options_.endpoints.size(); }
  const std::string& endpoint_name(std::size_t endpoint) const { return options_.endpoints[endpoint]; }
  std::size_t next_endpoint() { return next_endpoint_++ % options_.endpoints.size(); }

 private:
  using Fate = Lease::Fate;

  std::unique_ptr<Thrift2Connection> acquire(std::size_t endpoint, Pick pick, std::uint64_t priority) {
    std::unique_lock lock(mutex_);
    const bool reuse = pick == Pick::any;
    waiters_.wait(lock, priority,
                  [&] { return (reuse && !idle_[endpoint].empty()) || total_ < max_connections_ || any_idle(); });
    if (reuse && !idle_[endpoint].empty()) {
      auto connection = std::move(idle_[endpoint].back());
      idle_[endpoint].pop_back();
      return connection;
    }
    if (total_ >= max_connections_) drop_one_idle();  // make room: close an idle connection
    ++total_;
    Thrift2Options single = options_;
    single.endpoints = {options_.endpoints[endpoint]};  // the caller picked the endpoint (and fails over)
    return std::make_unique<Thrift2Connection>(std::move(single));
  }

  void release(std::size_t endpoint, std::unique_ptr<Thrift2Connection> connection, Fate fate) {
    std::vector<std::unique_ptr<Thrift2Connection>> dropped;  // closed outside the lock
    const std::lock_guard lock(mutex_);
    if (fate == Fate::keep) {
      idle_[endpoint].push_back(std::move(connection));
    } else {
      dropped.push_back(std::move(connection));
      if (fate == Fate::drop_endpoint) {
        auto& idle = idle_[endpoint];
        for (auto& c : idle) dropped.push_back(std::move(c));
        idle.clear();
      }
      total_ -= dropped.size();
    }
    // The first call in line only (each one let through wakes the next): waking every waiting
    // scan worker on each release cost most of the daemon's CPU in context switches under a query
    // load. Under the lock: the waiter it wakes cannot be gone meanwhile.
    waiters_.notify_locked();
    // `dropped` closes its sockets once the lock is released (declared before it).
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
  detail::OrderedWaiters waiters_;
  std::map<std::size_t, std::vector<std::unique_ptr<Thrift2Connection>>> idle_;
  std::size_t total_ = 0;
  std::atomic<std::size_t> next_endpoint_{0};
};

// A scan as a series of stateless getScannerResults calls (open, read up to numRows, close: all on
// the server, in one round trip), each starting just after the last row the previous one returned.
// A range whose rows fit in one chunk therefore costs one round trip, where openScanner +
// getScannerRows + closeScanner cost at least three (four when the last getScannerRows only learns
// that the scan is over). Nothing lives on the server between calls: no scanner to close when the
// merge stops early, none leaked when the client dies, and any call may go to any gateway.
class Thrift2RowScanner final : public RowScanner {
 public:
  Thrift2RowScanner(ConnectionPool& pool, std::atomic<std::size_t>& calls, const ScanRequest& request)
      : pool_(pool), calls_(calls), request_(request), chunk_rows_(request.chunk_rows) {}

  std::vector<ScannedRow> next_chunk() override {
    std::vector<ScannedRow> rows;
    while (!exhausted_ && rows.empty()) {
      // A reversed continuation starts at the last row again (the row just below it cannot be
      // written down), so it asks for one row more and drops that row, if it is still there: one
      // that expired or was deleted meanwhile is not in the answer, whose first row is then new.
      const std::optional<std::string> resumes_at = request_.reversed ? last_row_ : std::nullopt;
      const int wanted = chunk_rows_ + (resumes_at ? 1 : 0);
      auto results = call(wanted);
      // ResultScanner.next(n) returns fewer than n rows only when the scan is over.
      if (results.size() < static_cast<std::size_t>(wanted)) exhausted_ = true;
      if (!results.empty()) last_row_ = results.back().row;
      const bool repeated = resumes_at && !results.empty() && results.front().row == *resumes_at;
      rows.reserve(results.size());
      for (std::size_t i = repeated ? 1 : 0; i < results.size(); ++i) {
        if (!accept(results[i].row)) continue;
        rows.push_back(from_thrift_result(std::move(results[i])));
        largest_row_ = std::max(largest_row_, held_bytes(rows.back()));
      }
      chunk_rows_ = next_chunk_rows(request_, chunk_rows_, largest_row_);
    }
    return rows;
  }

  bool exhausted() const override { return exhausted_; }

  // Nothing to release on the server.
  void close() noexcept override { exhausted_ = true; }

  void cancel() noexcept override {
    const std::lock_guard lock(cancel_mutex_);
    cancelled_ = true;
    if (in_call_) in_call_->interrupt();
  }

 private:
  // Makes cancel() interrupt the call on `connection` for as long as it lives; refuses to start a
  // call once the scan is cancelled.
  class InCall {
   public:
    InCall(Thrift2RowScanner& scanner, Thrift2Connection& connection) : scanner_(scanner) {
      const std::lock_guard lock(scanner_.cancel_mutex_);
      if (scanner_.cancelled_) {
        throw HBaseError("scan of " + scanner_.request_.table + " cancelled (query deadline or error)",
                         connection.endpoint(), "getScannerResults", false);
      }
      scanner_.in_call_ = &connection;
    }
    ~InCall() {
      const std::lock_guard lock(scanner_.cancel_mutex_);
      scanner_.in_call_ = nullptr;
    }
    InCall(const InCall&) = delete;
    InCall& operator=(const InCall&) = delete;

   private:
    Thrift2RowScanner& scanner_;
  };

  bool cancelled() {
    const std::lock_guard lock(cancel_mutex_);
    return cancelled_;
  }

  gen::TScan make_scan(int rows) const {
    gen::TScan scan;
    if (request_.reversed) {
      scan.__set_reversed(true);
      if (last_row_) {
        scan.__set_startRow(*last_row_);
      } else if (!request_.stop_row.empty()) {
        scan.__set_startRow(request_.stop_row);
      }
      const auto stop = reversed_stop_row(request_.start_row);
      if (!stop.empty()) scan.__set_stopRow(stop);
    } else {
      // Start rows are inclusive: the smallest key after the last row is that row plus a 0x00.
      if (last_row_) {
        scan.__set_startRow(*last_row_ + std::string(1, '\0'));
      } else if (!request_.start_row.empty()) {
        scan.__set_startRow(request_.start_row);
      }
      if (!request_.stop_row.empty()) scan.__set_stopRow(request_.stop_row);
    }
    // One region-server RPC brings the whole chunk, and the server stops scanning after it.
    scan.__set_caching(rows);
    scan.__set_limit(rows);
    scan.__set_maxVersions(1);
    if (!request_.columns.empty()) {
      std::vector<gen::TColumn> columns;
      for (const auto& column : request_.columns) columns.push_back(to_thrift_column(column));
      scan.__set_columns(columns);
    }
    return scan;
  }

  std::vector<gen::TResult> call(int rows) {
    const gen::TScan scan = make_scan(rows);
    // No state lives on the server between calls, so a transport failure may move on to the next
    // endpoint.
    std::vector<gen::TResult> results;
    for (std::size_t attempt = 0;; ++attempt) {
      const std::size_t endpoint = pool_.next_endpoint();
      try {
        // A pooled socket that the gateway closed while it sat idle (a restart) fails without
        // saying anything about the gateway now: the call is made once more, on a new connection.
        if (!call_on(endpoint, ConnectionPool::Pick::any, scan, rows, results)) {
          spdlog::debug("scan of {}: a pooled connection to {} was closed; calling again on a new one", request_.table,
                        pool_.endpoint_name(endpoint));
          call_on(endpoint, ConnectionPool::Pick::fresh, scan, rows, results);
        }
        return results;
      } catch (const HBaseError& e) {
        if (!e.retriable() || attempt + 1 >= pool_.endpoints() || cancelled()) throw;
      }
    }
  }

  // One call on a connection to `endpoint`. False when a connection reused from the pool lost its
  // socket (the idle connections to that endpoint are dropped with it); other failures throw.
  bool call_on(std::size_t endpoint, ConnectionPool::Pick pick, const gen::TScan& scan, int rows,
               std::vector<gen::TResult>& results) {
    ConnectionPool::Lease connection(pool_, endpoint, pick, request_.priority);
    const bool reused = connection->connected();
    try {
      const InCall in_call(*this, *connection);
      ++calls_;
      connection->call("getScannerResults",
                       [&](auto& client) { client.getScannerResults(results, request_.table, scan, rows); });
    } catch (const HBaseError&) {
      if (cancelled()) {
        connection.discard();  // interrupted: the failure says nothing about the gateway
        throw;
      }
      if (connection->connected()) throw;  // the gateway answered (TIOError...): the socket is fine
      connection.discard_endpoint();
      if (!reused) throw;
      return false;
    }
    if (cancelled()) connection.discard();  // a cancel() that came just after the answer shut its socket
    return true;
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
  std::atomic<std::size_t>& calls_;
  ScanRequest request_;
  int chunk_rows_;
  std::optional<std::string> last_row_;  // the last row the server returned (before accept())
  std::size_t largest_row_ = 0;          // held_bytes of the largest row returned so far
  bool exhausted_ = false;
  std::mutex cancel_mutex_;  // guards cancelled_ and in_call_: cancel() comes from another thread
  bool cancelled_ = false;
  Thrift2Connection* in_call_ = nullptr;  // the connection of the call in progress, if any
};

// Under a security layer (hbase.sasl qop integrity or privacy) one reply of the gateway is one
// wrapped token, and cyrus-sasl unwraps at most 16 MiB of it (sasl_client_transport.cpp): a chunk is
// kept to half of that in held_bytes, which count more per cell than Thrift's encoding does.
constexpr std::size_t kWrappedChunkBytes = 8 * 1024 * 1024;

ScanRequest within_security_layer(ScanRequest request) {
  if (request.max_chunk_bytes == 0) {
    // No byte budget (`hbingest query`): the first call cannot know how large the rows are. One row
    // first, as QueryEngine does without a known row size, then doubling up to the rows asked for.
    request.max_chunk_rows = std::max(request.max_chunk_rows, request.chunk_rows);
    request.chunk_rows = 1;
    request.max_chunk_bytes = kWrappedChunkBytes;
  } else if (request.max_chunk_bytes > kWrappedChunkBytes) {
    // The first call was sized for the larger budget: scaled down with it.
    const std::size_t rows =
        static_cast<std::size_t>(request.chunk_rows) * kWrappedChunkBytes / request.max_chunk_bytes;
    request.chunk_rows = static_cast<int>(std::max<std::size_t>(1, rows));
    request.max_chunk_bytes = kWrappedChunkBytes;
  }
  return request;
}

class Thrift2ScannerFactoryImpl final : public Thrift2ScannerFactory {
 public:
  Thrift2ScannerFactoryImpl(const Thrift2Options& options, int max_connections)
      : pool_(options, max_connections),
        wrapped_(options.sasl.enabled && options.sasl.qop != SaslQop::authentication) {}

  std::unique_ptr<RowScanner> open(const ScanRequest& request) override {
    if (request.chunk_rows < 1) throw std::invalid_argument("scan request: chunk_rows must be >= 1");
    return std::make_unique<Thrift2RowScanner>(pool_, calls_, wrapped_ ? within_security_layer(request) : request);
  }

  std::size_t calls() const override { return calls_.load(); }

 private:
  ConnectionPool pool_;
  bool wrapped_;  // replies are security-layer tokens: within_security_layer()
  std::atomic<std::size_t> calls_{0};
};

}  // namespace

std::unique_ptr<Thrift2ScannerFactory> make_thrift2_scanner_factory(const Thrift2Options& options,
                                                                    int max_connections) {
  if (max_connections < 1) throw std::invalid_argument("scanner pool needs at least one connection");
  return std::make_unique<Thrift2ScannerFactoryImpl>(options, max_connections);
}

}  // namespace hbingest::connectors
