#pragma once
// The Confluent wire format around an Avro, Protobuf or JSON Schema value: magic byte 0, a 4-byte
// big-endian schema id, for Protobuf the message indexes (a zig-zag varint count, then that many
// zig-zag varints; a single 0 byte means [0]), then the payload. docs/formats.md, "Framing".

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hbingest/event_formats/input_format.h"

namespace hbingest::event_formats {

struct ConfluentFrame {
  std::int32_t schema_id = 0;
  std::vector<std::int32_t> message_indexes;  // Protobuf only; [0] for the single 0 byte
  std::string_view payload;                   // views the message
};

// More message indexes than any real schema nests; a frame claiming more is invalid.
inline constexpr std::size_t kMaxMessageIndexes = 64;

// Reads the frame; with_message_indexes for Protobuf. On failure: reason not_confluent_framed
// (saying what the first byte looks like: JSON, text) or truncated_frame, with the byte offset.
std::optional<DecodeFailure> read_confluent_frame(std::string_view message, bool with_message_indexes,
                                                  ConfluentFrame& out);

}  // namespace hbingest::event_formats
