#pragma once
// Checks that a message is exactly one value of an Avro schema, and finds where each top-level
// field's value is in it: the one pass over untrusted bytes. It reads every length, count and
// index once, without allocating, and refuses what the record's readers (avro_record.cpp, which
// then trust the bytes) must not see, naming the field path and byte offset.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "avro_schema.h"

namespace hbingest::event_formats::avro {

// A top-level field's value in the message: its type (a union's branch, never a union) and bytes.
struct FieldBytes {
  const Node* node = nullptr;
  std::string_view bytes;
};

// nullopt when `payload` is exactly one value of `root`, with `fields` (cleared first) holding
// each top-level field; else why not, e.g.
// "field items[2].sku: truncated: string length 4611686018427387904 at byte 17, only 3 bytes left".
// Also refused: more array or map items in all than the message has bytes (each item of a type
// that is not written in zero bytes takes one at least, so only 2^62 nulls in a few bytes are
// refused that way), nesting deeper than kMaxNesting, and a decimal wider than 128 bits.
std::optional<std::string> check_binary(const Node& root, std::string_view payload, std::vector<FieldBytes>& fields);

}  // namespace hbingest::event_formats::avro
