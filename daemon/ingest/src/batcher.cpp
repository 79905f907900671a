#include "hbingest/ingest/batcher.h"

#include <algorithm>

namespace hbingest::ingest {

namespace {
constexpr std::size_t kReservedRows = 1000;
}  // namespace

std::size_t Batcher::row_bytes(const connectors::RowMutation& row) {
  // What the RPC carries per cell: row key, family, qualifier, value, timestamp; per deleted
  // column the same without a value; a whole-row delete its key and timestamp. A batch of deletes
  // then closes on max_bytes as a batch of puts does, instead of only on max_rows.
  std::size_t bytes = 0;
  for (const auto& cell : row.cells) {
    bytes += row.row.size() + cell.family.size() + cell.qualifier.size() + cell.value.size() + 8;
  }
  for (const auto& column : row.deleted_columns) {
    bytes += row.row.size() + column.family.size() + column.qualifier.size() + 8;
  }
  if (row.kind == connectors::MutationKind::delete_row) bytes += row.row.size() + 8;
  return bytes;
}

std::vector<Batch> Batcher::add(const std::string& table, connectors::RowMutation row, RowOrigin origin,
                                Clock::time_point now) {
  std::vector<Batch> closed;
  const std::size_t bytes = row_bytes(row);
  auto it = open_.find(table);
  // A row that would overflow the byte limit closes the current batch first, so a batch exceeds
  // max_bytes only when one row alone does.
  if (it != open_.end() && !it->second.rows.empty() && it->second.bytes + bytes > limits_.max_bytes) {
    closed.push_back(std::move(it->second));
    open_.erase(it);
    it = open_.end();
  }
  if (it == open_.end()) {
    it = open_.emplace(table, Batch{table, {}, {}, 0, now}).first;
    // Room for a full batch at once (up to a bound, for very large max_rows): grown row by row,
    // both vectors were reallocated and every row and message moved ~9 times per 500-row batch.
    const std::size_t expected = std::min(limits_.max_rows, kReservedRows);
    it->second.rows.reserve(expected);
    it->second.origins.reserve(expected);
  }
  Batch& batch = it->second;
  batch.rows.push_back(std::move(row));
  batch.origins.push_back(std::move(origin));
  batch.bytes += bytes;
  if (batch.rows.size() >= limits_.max_rows || batch.bytes >= limits_.max_bytes) {
    closed.push_back(std::move(batch));
    open_.erase(it);
  }
  return closed;
}

std::vector<Batch> Batcher::expired(Clock::time_point now) {
  std::vector<Batch> closed;
  for (auto it = open_.begin(); it != open_.end();) {
    if (now - it->second.opened >= limits_.linger) {
      closed.push_back(std::move(it->second));
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return closed;
}

std::vector<Batch> Batcher::flush_all() {
  std::vector<Batch> closed;
  for (auto& [table, batch] : open_) closed.push_back(std::move(batch));
  open_.clear();
  return closed;
}

std::optional<Batcher::Clock::time_point> Batcher::next_deadline() const {
  std::optional<Clock::time_point> deadline;
  for (const auto& [table, batch] : open_) {
    const auto expiry = batch.opened + limits_.linger;
    if (!deadline || expiry < *deadline) deadline = expiry;
  }
  return deadline;
}

std::size_t Batcher::open_rows() const {
  std::size_t rows = 0;
  for (const auto& [table, batch] : open_) rows += batch.rows.size();
  return rows;
}

}  // namespace hbingest::ingest
