#pragma once
// The query model of the n-way scan reader: what to read, how, and what comes back.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/row_mapping.h"

namespace hbingest::query {

// Reads a packed cell (a route's whole-message column, `from: kafka:value`) back into one cell per
// top-level field, as the default mapping writes them, so a query answers the same for packed and
// field rows. Thread-safe.
class PackedCellReader {
 public:
  virtual ~PackedCellReader() = default;
  // Whether `cell` is the packed column.
  virtual bool reads(const connectors::ScannedCell& cell) const = 0;
  // Appends the fields' cells (the packed cell's family, its timestamp); false, with `out`
  // untouched and `why` set, when its bytes do not decode now (then the cell is answered as stored).
  virtual bool expand(const connectors::ScannedCell& cell, std::vector<connectors::ScannedCell>& out,
                      std::string& why) const = 0;
};

// Where the events of one type live.
struct EventRoute {
  std::string table;
  std::shared_ptr<const keyspec::KeySpec> spec;
  std::string family = "d";                                 // the family our daemon writes
  std::optional<std::set<std::string>> known_qualifiers{};  // nullopt: any qualifier of `family`
  // The route's row mapping: the type each stored cell was written with, so a query renders it back
  // (a binary long as a JSON number). Null: every cell is text.
  std::shared_ptr<const routing::RowMapping> columns_written{};
  std::shared_ptr<const PackedCellReader> packed{};  // set when the route writes a packed cell
};

enum class Order { asc, desc };

// How the rows of the n scans are combined.
//  time: heap-based k-way merge on KeySpec::merge_bytes (the key from the time component on), then
//        row key. Each scan comes back in that order when the plan fixes the leading components
//        (salt, event) so that time follows; a scan found out of order fails the query.
//  key:  the planned ranges are disjoint and sorted, so their concatenation is HBase key order;
//        ranges are opened in order, at most `concurrency` ahead of the one being emitted. Used for
//        full-table export, where rows of several event types share a bucket.
enum class MergeBy { time, key };

struct Query {
  std::string table;                             // "ns:table" or "table"
  std::shared_ptr<const keyspec::KeySpec> spec;  // required
  std::optional<std::string> event_id;           // fixes the spec's event component
  std::optional<std::int64_t> from_ms;           // inclusive
  std::optional<std::int64_t> to_ms;             // exclusive
  std::optional<int> full_table_splits;          // set: whole table in this many splits (key order)
  std::size_t limit = 1000;                      // 0 = no limit
  Order order = Order::asc;
  MergeBy merge = MergeBy::time;
  std::vector<std::string> columns;                              // "family" or "family:qualifier"; empty = all
  std::shared_ptr<const routing::RowMapping> columns_written{};  // EventRoute's: how to render cells
  std::shared_ptr<const PackedCellReader> packed{};              // EventRoute's
};

// Engine-wide defaults; see config::QueryConfig.
struct EngineOptions {
  int concurrency = 16;                       // scans in flight per query: min(n, this)
  int chunk_rows = 500;                       // rows per scan call (round trip), at most
  int prefetch_chunks = 2;                    // chunks buffered per scan
  std::chrono::milliseconds deadline{10000};  // per query
};

// Per-call overrides.
struct QueryOptions {
  std::optional<std::chrono::milliseconds> deadline{};
  // Serial: no worker threads; the caller drives one scan call at a time over the same ranges and
  // the same merge. Exists to measure what the concurrency buys (bench/).
  bool serial = false;
  // Bytes of rows (connectors::held_bytes) the query may hold at once: its chunks being fetched,
  // queued and merged. Each of its n ranges asks for chunks of at most
  // max_bytes / (n x (prefetch_chunks + 2)), judged by the largest row seen of the table and event type (a range still
  // gets one row per call); a table whose rows the engine has not seen yet starts with one-row chunks. /v1/events
  // passes what is left of its response budget (http.max_response_bytes): rows beyond it could not be sent. 0: bounded
  // by rows only.
  std::size_t max_bytes = 0;
};

// One row as returned to the caller.
struct ResultRow {
  std::string key;                             // raw row key bytes
  std::vector<keyspec::KeyPart> parts;         // decode(key)
  std::optional<std::string> event_component;  // name of the spec's event component
  std::vector<connectors::ScannedCell> cells;
  int bucket = -1;  // salt bucket of the range it came from
};

struct QueryStats {
  std::size_t rows = 0;
  bool truncated = false;        // the limit cut off at least one more row
  std::size_t scans = 0;         // ranges planned
  std::size_t scans_opened = 0;  // scanners actually opened
  std::chrono::microseconds elapsed{0};
};

struct QueryResult {
  std::vector<ResultRow> rows;
  QueryStats stats;
};

// The per-query deadline passed; every scanner was closed before this was thrown.
class QueryTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A query that cannot be run as asked (e.g. time merge over a spec without a time component).
// Raised before any scanner is opened, except for out-of-order scans under MergeBy::time.
class QueryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class QueryOutcome { ok, timeout, hbase_error, error };

// Metrics hooks. Called from query threads and scan worker threads concurrently: implementations
// must be thread-safe and must not throw.
class QueryObserver {
 public:
  virtual ~QueryObserver() = default;
  virtual void on_query(QueryOutcome outcome, std::chrono::microseconds latency, std::size_t rows) noexcept = 0;
  virtual void on_scanner_open() noexcept = 0;
  virtual void on_scanner_close() noexcept = 0;
};

}  // namespace hbingest::query
