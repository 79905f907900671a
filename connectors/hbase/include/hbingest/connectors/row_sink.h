#pragma once
// The write seam: the pipeline writes batches through a RowSink, so unit tests can fake HBase.

#include <span>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

struct WriteOptions {
  Durability durability = Durability::use_default;
};

// Rows of a batch that HBase refused for good (the rest of the batch is stored).
struct RejectedRow {
  std::size_t index;  // index into the batch
  std::string reason;
};

// Thread-safety: each RowSink instance is used by one writer thread at a time.
class RowSink {
 public:
  virtual ~RowSink() = default;
  // Writes all rows of one table in one putMultiple. Returns the rows rejected permanently.
  // Throws HBaseError when the whole call failed (retriable() says whether trying again helps).
  virtual std::vector<RejectedRow> write(const std::string& table, std::span<const RowMutation> rows,
                                         const WriteOptions& options) = 0;
  virtual std::string endpoint() const = 0;
};

}  // namespace hbingest::connectors
