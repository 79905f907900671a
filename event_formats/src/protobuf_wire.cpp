#include "protobuf_wire.h"

#include <cstring>
#include <utility>

namespace hbingest::event_formats::pbwire {

namespace {

// Messages nested deeper are left to libprotobuf, which allows 100 (CodedInputStream's default
// recursion limit) and refuses deeper ones: events nest a few levels.
constexpr int kMaxDepth = 64;

// Whether a short text is all ASCII, checked where it is called: most strings of events are short
// and ASCII, and a call cost as much as checking them.
inline bool ascii(std::string_view text) {
  if (text.size() > 32) return false;
  std::uint64_t any = 0;
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, 8);
    any |= word;
  }
  for (; i < text.size(); ++i) any |= static_cast<unsigned char>(text[i]);
  return (any & 0x8080808080808080u) == 0;
}

// Structurally valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), what
// libprotobuf requires of a proto3 string.
bool valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p != end) {
    // Sixteen, then eight ASCII bytes at a time: most text is.
    while (end - p >= 16) {
      std::uint64_t words[2];
      std::memcpy(words, p, 16);
      if (((words[0] | words[1]) & 0x8080808080808080u) != 0) break;
      p += 16;
    }
    while (end - p >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, 8);
      if ((word & 0x8080808080808080u) != 0) break;
      p += 8;
    }
    if (p == end) break;
    if (*p < 0x80) {
      ++p;
      continue;
    }
    int more = 0;
    std::uint32_t code = 0;
    std::uint32_t least = 0;
    if ((*p & 0xe0) == 0xc0) {
      more = 1, code = *p & 0x1f, least = 0x80;
    } else if ((*p & 0xf0) == 0xe0) {
      more = 2, code = *p & 0x0f, least = 0x800;
    } else if ((*p & 0xf8) == 0xf0) {
      more = 3, code = *p & 0x07, least = 0x10000;
    } else {
      return false;
    }
    if (end - p <= more) return false;
    for (int i = 1; i <= more; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
      code = (code << 6) | (p[i] & 0x3f);
    }
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    p += more + 1;
  }
  return true;
}

}  // namespace

bool Checker::check(const Table& table, std::string_view bytes, Layout& top) {
  top.reset(table);
  return message(table, Cursor{bytes.data(), bytes.data() + bytes.size()}, 0, &top);
}

bool Checker::message(const Table& table, Cursor in, int depth, Layout* top) {
  // Which singular message fields this message has had, one bit each: a message of more fields
  // than bits (rare) is left to libprotobuf.
  if (table.fields.size() > 64) return false;
  std::uint64_t seen = 0;

  const auto element = [&](const Field& field, const Item& item) {
    switch (field.kind) {
      case Kind::enumeration:
        return !field.closed_enum ||
               field.descriptor->enum_type()->FindValueByNumber(static_cast<std::int32_t>(item.raw)) != nullptr;
      case Kind::string:
        return !field.check_utf8 || ascii(item.bytes) || valid_utf8(item.bytes);
      case Kind::message:
        return depth < kMaxDepth &&
               message(*field.nested, Cursor{item.bytes.data(), item.bytes.data() + item.bytes.size()}, depth + 1,
                       nullptr);
      case Kind::group:
        return false;
      default:
        return true;
    }
  };

  std::uint32_t tag = 0;
  Item item;
  while (!in.done()) {
    const char* at = in.p;
    if (!in.tag(tag)) return false;
    const auto wire_type = static_cast<std::uint8_t>(tag & 7);
    const std::uint32_t number = tag >> 3;
    // A 0 tag or field number, an end-group tag outside a group (libprotobuf refuses them) or a
    // group (not read here).
    if (number == 0 || wire_type == 3 || wire_type == 4 || wire_type > 5) return false;
    if (!read_value(in, wire_type, item)) return false;
    const int index = table.find(number);
    if (index < 0) continue;  // unknown: skipped
    const Field& field = table.fields[static_cast<std::size_t>(index)];
    if (wire_type == field.wire_type) {
      if (!element(field, item)) return false;
      if (field.kind == Kind::message && !field.repeated) {
        // Given twice, libprotobuf merges the two messages.
        const std::uint64_t bit = std::uint64_t{1} << index;
        if ((seen & bit) != 0) return false;
        seen |= bit;
      }
    } else if (wire_type == length_delimited && field.packable) {
      Cursor packed{item.bytes.data(), item.bytes.data() + item.bytes.size()};
      Item element_item;
      while (!packed.done()) {
        if (!read_value(packed, field.wire_type, element_item) || !element(field, element_item)) return false;
      }
    } else {
      continue;  // another wire type than the field's: libprotobuf keeps it as an unknown field
    }
    if (top != nullptr) top->note(table, index, item, at);
  }
  return true;
}

void scan(const Table& table, std::string_view bytes, Layout& layout) {
  layout.reset(table);
  Cursor in{bytes.data(), bytes.data() + bytes.size()};
  std::uint32_t tag = 0;
  Item item;
  const char* at = in.p;
  while (!in.done() && in.tag(tag)) {
    const auto wire_type = static_cast<std::uint8_t>(tag & 7);
    if (!read_value(in, wire_type, item)) return;
    const char* const tag_at = std::exchange(at, in.p);
    const int index = table.find(tag >> 3);
    if (index < 0) continue;
    const Field& field = table.fields[static_cast<std::size_t>(index)];
    if (wire_type == field.wire_type || (wire_type == length_delimited && field.packable)) {
      layout.note(table, index, item, tag_at);
    }
  }
}

Item last_value(const Table& table, std::string_view bytes, std::size_t index) {
  const Field& field = table.fields[index];
  Item last = default_item(field);
  Cursor in{bytes.data(), bytes.data() + bytes.size()};
  std::uint32_t tag = 0;
  Item item;
  while (!in.done() && in.tag(tag)) {
    const auto wire_type = static_cast<std::uint8_t>(tag & 7);
    if (!read_value(in, wire_type, item)) break;
    if ((tag >> 3) == field.number && wire_type == field.wire_type) last = item;
  }
  return last;
}

}  // namespace hbingest::event_formats::pbwire
