#pragma once
// Collects rows per table into batches that close on max rows, max bytes or linger.
// Each row remembers the Kafka position it came from, so completion can be reported per offset.
// Not thread-safe: owned by the pipeline thread.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/source.h"

namespace hbingest::ingest {

struct RowOrigin {
  connectors::SourceMessage message;  // kept for the dead-letter topic if HBase rejects the row
  std::uint64_t generation = 0;       // the OffsetTracker generation its offset was tracked in
};

struct Batch {
  std::string table;
  std::vector<connectors::RowMutation> rows;
  std::vector<RowOrigin> origins;  // origins[i] belongs to rows[i]
  std::size_t bytes = 0;
  std::chrono::steady_clock::time_point opened;
};

struct BatchLimits {
  std::size_t max_rows = 500;
  std::size_t max_bytes = 2 * 1024 * 1024;
  std::chrono::milliseconds linger{50};
};

class Batcher {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Batcher(BatchLimits limits) : limits_(limits) {}

  // Adds a row; returns the batch it closed, if adding it reached a limit.
  std::vector<Batch> add(const std::string& table, connectors::RowMutation row, RowOrigin origin,
                         Clock::time_point now);
  // Batches open longer than linger.
  std::vector<Batch> expired(Clock::time_point now);
  std::vector<Batch> flush_all();
  // When the oldest open batch expires (for the poll timeout), or nullopt if none is open.
  std::optional<Clock::time_point> next_deadline() const;
  std::size_t open_rows() const;

  static std::size_t row_bytes(const connectors::RowMutation& row);

 private:
  BatchLimits limits_;
  std::map<std::string, Batch> open_;
};

}  // namespace hbingest::ingest
