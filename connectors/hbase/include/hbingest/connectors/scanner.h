#pragma once
// The read seam: the n-way query reader opens scanners through a ScannerFactory, so unit tests can
// substitute an in-memory table.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

struct ScanRequest {
  std::string table;                 // "ns:table" or "table"
  std::string start_row;             // inclusive
  std::string stop_row;              // exclusive; empty = end of table
  std::vector<std::string> columns;  // "family" or "family:qualifier"; empty = all
  int chunk_rows = 500;              // rows the first call asks for
  bool reversed = false;             // newest-first within [start_row, stop_row)
  int max_chunk_rows = 0;            // later calls double the chunk up to this; <= chunk_rows: no growth
  // Later calls ask for no more rows than fit in this many bytes (held_bytes), judged by the largest
  // row the scan has returned so far, and for one row at least. 0: rows only. (HBase 2.6's Thrift2
  // TScan has no maxResultSize: the bound is kept here, on the client.)
  std::size_t max_chunk_bytes = 0;
  // When calls wait for a connection of a shared pool, lower goes first (QueryEngine: the order
  // in which its queries started, so the oldest query is served first). Equal: in arrival order.
  std::uint64_t priority = 0;
};

// The rows a scan asks for in its next call, after one that asked for `current`: doubling up to
// max_chunk_rows, then no more than fit in max_chunk_bytes by the largest row seen (at least one).
inline int next_chunk_rows(const ScanRequest& request, int current, std::size_t largest_row_bytes) {
  int rows = request.max_chunk_rows > current ? std::min(request.max_chunk_rows, 2 * current) : current;
  if (request.max_chunk_bytes > 0 && largest_row_bytes > 0) {
    const std::size_t fit = std::max<std::size_t>(1, request.max_chunk_bytes / largest_row_bytes);
    rows = static_cast<int>(std::min(static_cast<std::size_t>(rows), fit));
  }
  return rows;
}

// One range being scanned. Not thread-safe: one thread drives it. The destructor closes it (never
// throws); close() may be called early and more than once.
class RowScanner {
 public:
  virtual ~RowScanner() = default;
  // The next chunk of rows, at most chunk_rows. An empty result means the scan is exhausted.
  // Throws HBaseError.
  virtual std::vector<ScannedRow> next_chunk() = 0;
  // True once the scanner knows the range has no more rows (its last call came back short): the
  // caller must not spend a call to learn it.
  virtual bool exhausted() const = 0;
  virtual void close() noexcept = 0;
  // The one call that may come from another thread, while next_chunk() runs: makes a call in
  // progress fail at once (and every later one), so that a query past its deadline does not wait
  // for a gateway that does not answer. A scanner without calls to interrupt ignores it.
  virtual void cancel() noexcept {}
};

// Thread-safe. open() may block while the connection pool is exhausted.
class ScannerFactory {
 public:
  virtual ~ScannerFactory() = default;
  virtual std::unique_ptr<RowScanner> open(const ScanRequest& request) = 0;
};

}  // namespace hbingest::connectors
