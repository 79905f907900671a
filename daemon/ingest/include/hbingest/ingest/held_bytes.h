#pragma once
// What an event costs the process while it is in flight, for flow control (writer.max_inflight_bytes).
//
// Counting only the Kafka payload undercounted by the decoded cells: ~2× with `columns: fields`,
// ~3× with `both` (cells plus the raw copy), and ~17× for events of 10,000 small fields, where
// the per-cell strings and vector slots dwarf the bytes. So this counts the objects and their heap
// blocks as libstdc++ and malloc lay them out: the struct itself, every string's heap buffer
// (capacity, not size, once it is past the inline buffer) and vector storage, each heap block
// with malloc's per-block overhead. It is an estimate of the allocator's view, checked against
// mallinfo2 in tests/unit/ingest/held_bytes_test.cpp.

#include <cstddef>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/source.h"

namespace hbingest::ingest {

// The message as the pipeline keeps it (for the dead-letter topic, until its row is stored).
std::size_t held_bytes(const connectors::SourceMessage& message);
// The row queued for HBase (key, cells and deleted columns).
std::size_t held_bytes(const connectors::RowMutation& row);

}  // namespace hbingest::ingest
