#pragma once
// A Protobuf message's wire bytes read in place, with its type's table (protobuf_wire_table.h):
// a checking pass that accepts exactly what libprotobuf's parse of a dynamic message accepts, or
// leaves the message to it, and the readers the record (protobuf_wire_record.h) gets values with
// afterwards. Reading the bytes where they are costs a fraction of libprotobuf's reflection parse
// and read-back (bench/README.md, "Per format").
//
// The check refuses (returns false) whatever it does not read here with certainty, and the
// format then parses that message with libprotobuf, which decides and says why: bytes that are
// invalid (a truncated or malformed value, a 0 or end-group tag, a length past the end, a string
// that is not UTF-8 in proto3), groups, a number a proto2 enum lacks (libprotobuf keeps it as an
// unknown field), a singular message field given twice (libprotobuf merges the two), nesting
// deeper than libprotobuf's limit. What it accepts, the readers read as libprotobuf's message
// holds it: the last occurrence of a singular field wins, a oneof is its last member given,
// repeated fields packed and unpacked alike, unknown fields skipped.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "protobuf_wire_table.h"

namespace hbingest::event_formats::pbwire {

// Bounded by the bytes at every step: a read past `end` fails, whatever length a value claims.
struct Cursor {
  const char* p;
  const char* end;

  bool done() const { return p == end; }

  // A varint of up to 10 bytes, its value the low 64 bits (as libprotobuf reads it).
  bool varint(std::uint64_t& out) {
    std::uint64_t value = 0;
    for (int i = 0; i < 10; ++i) {
      if (p == end) return false;
      const auto byte = static_cast<std::uint8_t>(*p++);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        out = value;
        return true;
      }
    }
    return false;
  }
  // A tag: up to 5 bytes, its low 32 bits (libprotobuf's ReadTag).
  bool tag(std::uint32_t& out) {
    if (p != end && static_cast<std::uint8_t>(*p) < 0x80) {
      out = static_cast<std::uint8_t>(*p++);
      return true;
    }
    std::uint32_t value = 0;
    for (int i = 0; i < 5; ++i) {
      if (p == end) return false;
      const auto byte = static_cast<std::uint8_t>(*p++);
      value |= static_cast<std::uint32_t>(byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        out = value;
        return true;
      }
    }
    return false;
  }
  // A length: up to 5 bytes and under 2 GiB (libprotobuf's ReadSize), then that many bytes.
  bool delimited(std::string_view& out) {
    std::uint32_t size = 0;
    for (int i = 0;; ++i) {
      if (p == end || i == 5) return false;
      const auto byte = static_cast<std::uint8_t>(*p++);
      if (i == 4 && byte >= 8) return false;
      size |= static_cast<std::uint32_t>(byte & 0x7f) << (7 * i);
      if (byte < 0x80) break;
    }
    if (size > static_cast<std::size_t>(end - p)) return false;
    out = std::string_view(p, size);
    p += size;
    return true;
  }
  bool fixed(int bytes, std::uint64_t& out) {
    if (end - p < bytes) return false;
    std::uint64_t value = 0;
    std::memcpy(&value, p, static_cast<std::size_t>(bytes));  // little-endian, as the wire
    p += bytes;
    out = value;
    return true;
  }
};

static_assert(std::endian::native == std::endian::little, "fixed-width values are read as the wire's little-endian");

// One value of a field as the wire holds it: a varint's or fixed value's bits in `raw`, a string's,
// bytes' or message's bytes in `bytes`.
struct Item {
  std::uint64_t raw = 0;
  std::string_view bytes;
};

// A field's absent value: its default.
inline Item default_item(const Field& field) { return {field.default_raw, field.default_string}; }

// Reads one value written with `wire_type` (not a group). False when the bytes end first.
inline bool read_value(Cursor& in, std::uint8_t wire_type, Item& out) {
  switch (wire_type) {
    case varint:
      return in.varint(out.raw);
    case fixed64:
      return in.fixed(8, out.raw);
    case fixed32:
      return in.fixed(4, out.raw);
    case length_delimited:
      return in.delimited(out.bytes);
    default:
      return false;
  }
}

// Where a message's singular fields are: each one's last value given, and each oneof's last
// member given. Marked with the number of the message they belong to, not cleared for each
// message: a layout is made afresh for every message and every nested one rendered, and clearing
// cost more than reading the fields.
struct Occurrence {
  Item item;
  std::uint32_t stamp = 0;
};
struct OneofCase {
  int index = -1;
  std::uint32_t stamp = 0;
};
class Layout {
 public:
  void reset(const Table& table) {
    if (fields_.size() < table.fields.size()) fields_.resize(table.fields.size());
    if (oneofs_.size() < static_cast<std::size_t>(table.oneof_count)) {
      oneofs_.resize(static_cast<std::size_t>(table.oneof_count));
    }
    if (++stamp_ == 0) {  // wrapped: the old marks could pass for new ones
      for (auto& field : fields_) field.stamp = 0;
      for (auto& oneof : oneofs_) oneof.stamp = 0;
      stamp_ = 1;
    }
  }
  // Field `index` given, its tag at `at`. A repeated field keeps where it was first given, which
  // its cell's walk over the message starts from.
  void note(const Table& table, int index, const Item& item, const char* at) {
    const Field& field = table.fields[static_cast<std::size_t>(index)];
    Occurrence& occurrence = fields_[static_cast<std::size_t>(index)];
    if (field.repeated) {
      if (occurrence.stamp != stamp_) occurrence = {Item{0, std::string_view(at, 0)}, stamp_};
      return;
    }
    occurrence = {item, stamp_};
    if (field.oneof >= 0) oneofs_[static_cast<std::size_t>(field.oneof)] = {index, stamp_};
  }
  // Where repeated field `index` was first given (its tag), nullptr when it was not.
  const char* first(std::size_t index) const {
    return fields_[index].stamp == stamp_ ? fields_[index].item.bytes.data() : nullptr;
  }
  // Whether a singular field holds a value: the oneof's current member, or given at all.
  bool present(const Table& table, std::size_t index) const {
    const Field& field = table.fields[index];
    if (field.oneof >= 0) {
      const OneofCase& oneof = oneofs_[static_cast<std::size_t>(field.oneof)];
      return oneof.stamp == stamp_ && oneof.index == static_cast<int>(index);
    }
    return fields_[index].stamp == stamp_;
  }
  // A present field's value.
  const Item& item(std::size_t index) const { return fields_[index].item; }
  // A singular field's value, its default when absent.
  Item value(const Table& table, std::size_t index) const {
    return present(table, index) ? fields_[index].item : default_item(table.fields[index]);
  }

 private:
  std::vector<Occurrence> fields_;
  std::vector<OneofCase> oneofs_;
  std::uint32_t stamp_ = 0;
};

// The checking pass. Allocates nothing.
class Checker {
 public:
  // Whether `bytes` is a message of `table`'s type that the readers read exactly as libprotobuf
  // would; `top` gets the top-level fields' layout. A message of a type of more than 64 fields
  // (or holding one) is left to libprotobuf.
  bool check(const Table& table, std::string_view bytes, Layout& top);

 private:
  bool message(const Table& table, Cursor in, int depth, Layout* top);
};

// Scans a message already checked: `layout` gets its singular fields.
void scan(const Table& table, std::string_view bytes, Layout& layout);

// The last value of singular field `index` in a checked message, its default when absent
// (not for oneof members).
Item last_value(const Table& table, std::string_view bytes, std::size_t index);

// Calls `each(item)` for every element of repeated field `index` of a checked message, in order.
template <typename Each>
void for_each_element(const Table& table, std::string_view bytes, std::size_t index, Each&& each) {
  const Field& field = table.fields[index];
  Cursor in{bytes.data(), bytes.data() + bytes.size()};
  std::uint32_t tag = 0;
  Item item;
  while (!in.done() && in.tag(tag)) {
    const auto wire_type = static_cast<std::uint8_t>(tag & 7);
    if (!read_value(in, wire_type, item)) return;
    if ((tag >> 3) != field.number) continue;
    if (wire_type == field.wire_type) {
      each(item);
    } else if (wire_type == length_delimited && field.packable) {
      Cursor packed{item.bytes.data(), item.bytes.data() + item.bytes.size()};
      Item element;
      while (!packed.done() && read_value(packed, field.wire_type, element)) each(element);
    }
  }
}

}  // namespace hbingest::event_formats::pbwire
