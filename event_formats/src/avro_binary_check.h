#pragma once
// Checks that a message is exactly one value of an Avro schema, before avro-c reads it. avro-c
// 1.11.1 trusts the bytes more than a message deserves: it allocates a string's or bytes' claimed
// length before reading it (2^62: a failed allocation, an abort under ASan; 2^31: 2 GiB reserved),
// appends array items one by one however many a block claims (2^62 nulls: a loop that never ends,
// memory that grows with it), recurses as deep as a recursive schema's message nests, and stores an
// enum index without checking it. This pass reads every length, count and index once, without
// allocating, and refuses what avro-c must not see, naming the field path and byte offset.

#include <optional>
#include <string>
#include <string_view>

#include "avro_schema.h"

namespace hbingest::event_formats::avro {

// nullopt when `payload` is exactly one value of `root`; else why not, e.g.
// "items[2].sku: string length 4611686018427387904 at byte 17, only 3 bytes left".
// Also refused: more array or map items in all than the message has bytes (each item of a type
// that is not written in zero bytes takes one at least), nesting deeper than kMaxNesting, and a
// decimal wider than 128 bits.
std::optional<std::string> check_binary(const Node& root, std::string_view payload);

}  // namespace hbingest::event_formats::avro
