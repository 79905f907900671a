#pragma once
// QueryEngine: the parallel n-way scan reader.
//
// A query is planned by its KeySpec into n ranges (one per salt bucket or split). The ranges are
// scanned by at most min(n, concurrency) worker threads, each scan streaming chunks into a queue of
// at most prefetch_chunks chunks; the calling thread merges them (see MergeBy) and hands rows out as
// they are ready. A limit, the deadline, the first scan error or an exception from the row callback
// stop everything: pending scans are never opened, open scanners are closed and every worker
// thread is joined before run()/stream() return or throw.
//
// Thread safety: run() and stream() may be called concurrently from any number of threads; each
// call owns its scans and workers. The ScannerFactory and observer must outlive the engine.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hbingest/connectors/scanner.h"
#include "hbingest/query/query.h"

namespace hbingest::query {

// The ranges a query scans (what QueryEngine::plan answers; it needs no engine). Throws
// keyspec::SpecError when the spec cannot plan it, QueryError when the query is malformed.
std::vector<keyspec::ScanRange> plan_query(const Query& query);

class QueryEngine {
 public:
  using RowCallback = std::function<void(ResultRow&&)>;

  QueryEngine(connectors::ScannerFactory& factory, EngineOptions options, QueryObserver* observer = nullptr);
  QueryEngine(const QueryEngine&) = delete;
  QueryEngine& operator=(const QueryEngine&) = delete;

  // The ranges a query scans. Throws keyspec::SpecError when the spec cannot plan it, QueryError
  // when the query is malformed.
  std::vector<keyspec::ScanRange> plan(const Query& query) const;

  // Collects the rows. Throws QueryTimeout, connectors::HBaseError (the first scan error),
  // keyspec::SpecError / QueryError (before any scan), keyspec::DecodeError.
  QueryResult run(const Query& query, const QueryOptions& options = {});
  // Same, handing each row to `on_row` on the calling thread as soon as the merge releases it.
  // An exception from on_row cancels the query and is rethrown.
  QueryStats stream(const Query& query, const QueryOptions& options, const RowCallback& on_row);

  // Scanners open right now across all queries of this engine (for tests and gauges).
  int open_scanners() const noexcept { return open_scanners_.load(); }
  const EngineOptions& options() const noexcept { return options_; }

 private:
  QueryStats execute(const Query& query, const QueryOptions& options, const RowCallback& on_row);

  // The largest row (connectors::held_bytes) read so far per table and event type: sizes the first
  // chunk of a query with a byte budget, before its own scans have seen a row. Per event type, since
  // the events of one table may differ in size by orders of magnitude (narrow logins, wide orders),
  // and a size learned from one must not size the calls for another. A kind not noted (never seen,
  // or beyond kMaxKinds: event ids come from requests) starts with one-row chunks. Thread-safe.
  class RowSizes {
   public:
    std::optional<std::size_t> largest(const Query& query) const;
    void note(const Query& query, std::size_t bytes);

   private:
    static constexpr std::size_t kMaxKinds = 1024;
    static std::string kind_of(const Query& query);
    mutable std::mutex mutex_;
    std::map<std::string, std::size_t, std::less<>> largest_;
  };

  connectors::ScannerFactory& factory_;
  EngineOptions options_;
  QueryObserver* observer_;
  std::atomic<int> open_scanners_{0};
  std::atomic<std::uint64_t> next_query_{0};  // each query's scans carry its number as their priority
  RowSizes row_sizes_;
};

}  // namespace hbingest::query
