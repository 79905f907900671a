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
  // Writes all rows (puts and deletes, see RowMutation) of one table, keeping each row's order.
  // Returns the rows rejected permanently (each index once). Throws HBaseError when a call failed
  // as a whole (retriable() says whether trying again helps); the batch may then be partly stored,
  // and writing it again is safe (the same cells and delete markers at the same timestamps).
  virtual std::vector<RejectedRow> write(const std::string& table, std::span<const RowMutation> rows,
                                         const WriteOptions& options) = 0;
  virtual std::string endpoint() const = 0;
};

}  // namespace hbingest::connectors
