#pragma once
// Plain data exchanged with HBase. No Thrift types leak past connectors/hbase/src.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::connectors {

// An HBase table name, "ns:table" written out. The one place that splits and joins the two parts.
struct TableName {
  std::string ns;
  std::string table;

  // "ns:table", or "table" in `default_ns`.
  static TableName parse(std::string_view text, std::string_view default_ns = "default");
  std::string qualified() const { return ns + ":" + table; }
};

struct Cell {
  std::string family;
  std::string qualifier;
  std::string value;
};

enum class Durability { use_default, skip_wal, async_wal, sync_wal, fsync_wal };

// A column named for a delete.
struct ColumnRef {
  std::string family;
  std::string qualifier;
};

enum class MutationKind {
  put,         // write `cells`, and delete `deleted_columns`
  delete_row,  // delete every cell of the row, in every family, with a timestamp <= timestamp_ms
};

// One change to one row. All its cells share the row's timestamp.
//
// The delete timestamp rule: a delete carries the event's own time (a tombstone's Kafka
// timestamp) and removes every cell of its scope whose timestamp is <= it, as HBase's
// `new Delete(row, ts)` and `Delete.addColumns(family, qualifier, ts)` do. So a delete never
// misses a put of an earlier event, whichever reached HBase first, and never masks a put of a
// later event (ts > the delete's), in whatever order the writers sent them. The one blind spot is
// HBase's: a delete marker at t masks every put at t, before or after it, so an event put in the
// same millisecond as a delete of its row (or column) is lost, even when it came after the delete.
struct RowMutation {
  std::string row;
  std::vector<Cell> cells;  // put only
  std::int64_t timestamp_ms = 0;
  std::optional<std::int64_t> ttl_ms;  // put only: per-mutation TTL (the `_ttl` attribute); nullopt: family TTL only
  MutationKind kind = MutationKind::put;
  // put only (`null_fields: delete_cell`): columns whose every version with a timestamp <=
  // timestamp_ms is deleted. They must not be among `cells` (HBase's delete at the same timestamp
  // would mask the put). A put with no cells and only these sends no put, only the delete.
  std::vector<ColumnRef> deleted_columns{};
};

struct ScannedCell {
  std::string family;
  std::string qualifier;
  std::string value;
  std::int64_t timestamp_ms = 0;
};

struct ScannedRow {
  std::string row;
  std::vector<ScannedCell> cells;
};

// What a scanned row holds in memory: its bytes and the cells' bookkeeping. Byte budgets of scans
// and queries count this.
inline std::size_t held_bytes(const ScannedRow& row) {
  std::size_t bytes = sizeof(ScannedRow) + row.row.size() + row.cells.size() * sizeof(ScannedCell);
  for (const auto& cell : row.cells) bytes += cell.family.size() + cell.qualifier.size() + cell.value.size();
  return bytes;
}

// A failed call to HBase. `retriable` is true for transport failures and HBase IOErrors that a
// later attempt may not hit (region moving, region too busy, server restarting).
class HBaseError : public std::runtime_error {
 public:
  HBaseError(const std::string& message, std::string endpoint, std::string operation, bool retriable)
      : std::runtime_error(message),
        endpoint_(std::move(endpoint)),
        operation_(std::move(operation)),
        retriable_(retriable) {}
  const std::string& endpoint() const noexcept { return endpoint_; }
  const std::string& operation() const noexcept { return operation_; }
  bool retriable() const noexcept { return retriable_; }

 private:
  std::string endpoint_;
  std::string operation_;
  bool retriable_;
};

}  // namespace hbingest::connectors
