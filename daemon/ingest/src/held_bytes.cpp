#include "hbingest/ingest/held_bytes.h"

#include <string>

namespace hbingest::ingest {

namespace {

// glibc malloc: an 8-byte header per chunk, chunks rounded up to 16 bytes.
constexpr std::size_t kMallocOverhead = 16;

std::size_t heap_block(std::size_t bytes) { return bytes == 0 ? 0 : bytes + kMallocOverhead; }

std::size_t heap_bytes(const std::string& s) {
  // Short strings live inside the object (libstdc++: 15 chars); longer ones own capacity + NUL.
  static const std::size_t inline_capacity = std::string().capacity();
  return s.capacity() > inline_capacity ? heap_block(s.capacity() + 1) : 0;
}

}  // namespace

std::size_t held_bytes(const connectors::SourceMessage& message) {
  std::size_t bytes = sizeof(message) + heap_bytes(message.topic);
  if (message.payload) bytes += heap_bytes(*message.payload);
  if (message.key) bytes += heap_bytes(*message.key);
  if (!message.headers.empty()) {
    bytes += heap_block(message.headers.capacity() * sizeof(connectors::MessageHeader));
    for (const auto& header : message.headers) {
      bytes += heap_bytes(header.name);
      if (header.value) bytes += heap_bytes(*header.value);
    }
  }
  return bytes;
}

std::size_t held_bytes(const connectors::RowMutation& row) {
  std::size_t bytes = sizeof(row) + heap_bytes(row.row) + heap_block(row.cells.capacity() * sizeof(connectors::Cell));
  for (const auto& cell : row.cells) {
    bytes += heap_bytes(cell.family) + heap_bytes(cell.qualifier) + heap_bytes(cell.value);
  }
  // A put's deleted columns (`null_fields: delete_cell`); a delete_row holds its key only.
  bytes += heap_block(row.deleted_columns.capacity() * sizeof(connectors::ColumnRef));
  for (const auto& column : row.deleted_columns) bytes += heap_bytes(column.family) + heap_bytes(column.qualifier);
  return bytes;
}

}  // namespace hbingest::ingest
