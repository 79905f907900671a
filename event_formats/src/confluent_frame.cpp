#include "hbingest/event_formats/confluent_frame.h"

#include <cctype>
#include <cstdio>
#include <string>

namespace hbingest::event_formats {
namespace {

// What a first byte other than the magic 0 suggests the message is, for the reason's text.
std::string looks_like(unsigned char first) {
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02x", first);
  std::string text = std::string("first byte ") + hex;
  if (first == '{' || first == '[') return text + ", looks like JSON";
  if (std::isprint(first) != 0) return text + " ('" + std::string(1, static_cast<char>(first)) + "'), looks like text";
  return text;
}

// A zig-zag varint of at most 32 bits, as the Confluent Protobuf serializers write the indexes.
bool read_zigzag_varint(std::string_view bytes, std::size_t& at, std::int32_t& value) {
  std::uint64_t raw = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (at >= bytes.size()) return false;
    const auto byte = static_cast<unsigned char>(bytes[at++]);
    raw |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      if (raw > 0xFFFFFFFFu) return false;
      const auto u = static_cast<std::uint32_t>(raw);
      value = static_cast<std::int32_t>((u >> 1) ^ (~(u & 1) + 1));
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<DecodeFailure> read_confluent_frame(std::string_view message, bool with_message_indexes,
                                                  ConfluentFrame& out) {
  out.message_indexes.clear();
  if (message.empty()) return DecodeFailure::invalid("not_confluent_framed", "empty message: no magic byte");
  const auto first = static_cast<unsigned char>(message[0]);
  if (first != 0) return DecodeFailure::invalid("not_confluent_framed", looks_like(first) + ", not the magic byte 0");
  if (message.size() < 5) {
    return DecodeFailure::invalid(
        "truncated_frame", "message of " + std::to_string(message.size()) + " bytes ends inside the 4-byte schema id");
  }
  std::uint32_t id = 0;
  for (std::size_t i = 1; i < 5; ++i) id = (id << 8) | static_cast<unsigned char>(message[i]);
  out.schema_id = static_cast<std::int32_t>(id);
  std::size_t at = 5;
  if (with_message_indexes) {
    std::int32_t count = 0;
    if (!read_zigzag_varint(message, at, count)) {
      return DecodeFailure::invalid("truncated_frame", "message indexes: no valid count at byte 5", out.schema_id);
    }
    if (count == 0) {
      out.message_indexes.push_back(0);  // the single 0 byte: the first message of the schema
    } else if (count < 0 || static_cast<std::size_t>(count) > kMaxMessageIndexes) {
      return DecodeFailure::invalid(
          "bad_frame",
          "message indexes: count " + std::to_string(count) + " is not in 1.." + std::to_string(kMaxMessageIndexes),
          out.schema_id);
    } else {
      for (std::int32_t i = 0; i < count; ++i) {
        std::int32_t index = 0;
        if (!read_zigzag_varint(message, at, index)) {
          return DecodeFailure::invalid("truncated_frame",
                                        "message indexes: index " + std::to_string(i) + " of " + std::to_string(count) +
                                            " is not a valid varint at byte " + std::to_string(at),
                                        out.schema_id);
        }
        if (index < 0) {
          return DecodeFailure::invalid("bad_frame", "message indexes: index " + std::to_string(i) + " is negative",
                                        out.schema_id);
        }
        out.message_indexes.push_back(index);
      }
    }
  }
  out.payload = message.substr(at);
  return std::nullopt;
}

}  // namespace hbingest::event_formats
