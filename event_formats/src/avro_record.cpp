#include "avro_record.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace hbingest::event_formats::avro {

using keyspec::FieldValue;
using keyspec::NestedValue;

namespace {

// GCC's and clang's 128-bit integer (`__extension__`: not ISO C++, which -Wpedantic would say).
__extension__ typedef unsigned __int128 Uint128;

// Floor, not truncation: -1 µs is in the millisecond before the epoch.
std::int64_t micros_to_ms(std::int64_t micros) {
  const std::int64_t remainder = ((micros % 1000) + 1000) % 1000;
  return (micros - remainder) / 1000;
}

// A float as the double its shortest text reads as: 1.1f is 1.1, as a producer that wrote the
// event's JSON twin from the same float would write it (the double nearest 1.1f is 1.100000023841858).
// std::to_chars(float) and from_chars cost ~500 instructions a float; most floats in events have
// at most 3 decimals, as append_double's doubles (cell_text.h): for those the shortest text is
// m / 10^k for the least k in 0..3 whose nearest candidate m = round(x * 10^k) reads back to the
// float, and the double that text reads as is the correctly rounded m / 10^k. x * 10^k is exact
// (24 bits times at most 10 bits). A tie (x * 10^k ending in .5: 16384.0625f at k = 3) rounds to
// even, as to_chars chooses between two shortest texts. Checked against to_chars + from_chars for
// every float from 1e-12 to 1.0001e5: no difference.
double widen(float value) {
  constexpr double kPowers[] = {1.0, 10.0, 100.0, 1000.0};
  const double exact = value;
  const double magnitude = exact < 0 ? -exact : exact;
  if (magnitude > 0 && magnitude < 1e5) {
    for (const double power : kPowers) {
      const double candidate = std::nearbyint(magnitude * power) / power;
      if (static_cast<float>(candidate) == static_cast<float>(magnitude)) return exact < 0 ? -candidate : candidate;
    }
  }
  if (!std::isfinite(value)) return exact;
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof(buffer), value);
  double out = 0;
  std::from_chars(buffer, written.ptr, out);
  return out;
}

// The text of a decimal: the unscaled value (big-endian two's complement, at most 128 bits once
// its sign-extension bytes are dropped: check_binary refused wider ones) with `scale` decimals:
// 1250 at scale 2 is "12.50", -5 at scale 3 is "-0.005".
void append_decimal(std::string_view unscaled, int scale, std::string& out) {
  Uint128 bits = 0;
  const bool negative = !unscaled.empty() && static_cast<unsigned char>(unscaled[0]) >= 0x80;
  std::size_t first = 0;
  while (unscaled.size() - first > 16) ++first;  // sign extension only
  for (std::size_t i = first; i < unscaled.size(); ++i) bits = (bits << 8) | static_cast<unsigned char>(unscaled[i]);
  const std::size_t width = unscaled.size() - first;
  if (negative && width < 16) bits |= ~static_cast<Uint128>(0) << (8 * width);  // sign-extend
  const Uint128 magnitude = negative ? ~bits + 1 : bits;
  char digits[48];
  char* at = digits + sizeof(digits);
  auto rest = magnitude;
  while (rest > UINT64_MAX) {  // 128-bit division is a library call: only for what 64 bits cannot hold
    *--at = static_cast<char>('0' + static_cast<int>(rest % 10));
    rest /= 10;
  }
  auto low = static_cast<std::uint64_t>(rest);
  do {
    *--at = static_cast<char>('0' + static_cast<int>(low % 10));
    low /= 10;
  } while (low != 0);
  auto text = std::string_view(at, static_cast<std::size_t>(digits + sizeof(digits) - at));
  if (negative && magnitude != 0) out += '-';
  const auto places = static_cast<std::size_t>(scale);
  if (places == 0) {
    out.append(text);
    return;
  }
  if (text.size() <= places) {
    out += "0.";
    out.append(places - text.size(), '0');
    out.append(text);
    return;
  }
  out.append(text.substr(0, text.size() - places));
  out += '.';
  out.append(text.substr(text.size() - places));
}

// Bytes as a JSON string holds them in Avro's JSON encoding: each byte the code point of the same
// number (ISO-8859-1), here written as UTF-8; the formatter escapes the control characters.
void latin1_to_utf8(std::string_view bytes, std::string& out) {
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      out += c;
    } else {
      out += static_cast<char>(0xC0 | (byte >> 6));
      out += static_cast<char>(0x80 | (byte & 0x3F));
    }
  }
}

// Readers of values check_binary checked: each length, count and index is in range, so they read
// without bounds checks, advancing `at` past the value.
std::uint64_t read_varint_bits(const char*& at) {
  std::uint64_t bits = 0;
  for (int shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(*at++);
    bits |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return bits;
  }
}
std::int64_t read_long(const char*& at) {
  const auto bits = read_varint_bits(at);
  return static_cast<std::int64_t>((bits >> 1) ^ (~(bits & 1) + 1));
}
std::string_view read_bytes(const char*& at) {
  const auto size = static_cast<std::size_t>(read_long(at));
  const std::string_view bytes(at, size);
  at += size;
  return bytes;
}
// Avro writes floats and doubles little-endian, whatever the machine.
template <typename Float, typename Bits>
Float read_float(const char*& at) {
  Bits bits = 0;
  for (std::size_t i = 0; i < sizeof(Bits); ++i)
    bits |= static_cast<Bits>(static_cast<unsigned char>(at[i])) << (8 * i);
  at += sizeof(Bits);
  return std::bit_cast<Float>(bits);
}

std::string_view bytes_of(const char*& at, const Node& node) {
  if (node.type != AVRO_FIXED) return read_bytes(at);
  const std::string_view bytes(at, static_cast<std::size_t>(node.fixed_size));
  at += node.fixed_size;
  return bytes;
}
std::int64_t integer_of(const char*& at, const Node& node) {
  const auto number = read_long(at);
  return node.logical == LogicalType::timestamp_micros ? micros_to_ms(number) : number;
}
double double_of(const char*& at, const Node& node) {
  return node.type == AVRO_FLOAT ? widen(read_float<float, std::uint32_t>(at)) : read_float<double, std::uint64_t>(at);
}
std::string_view symbol_of(const char*& at, const Node& node) {
  return node.symbols[static_cast<std::size_t>(read_long(at))];
}

// Passes over a value without reading it. Recursion as deep as the schema nests, which check_binary
// bounds (kMaxNesting) for messages of recursive schemas too. A block's byte size is not trusted to
// skip it (check_binary does not hold the items to it): its items are passed one by one.
void skip(const char*& at, const Node& node) {
  switch (node.type) {
    case AVRO_BOOLEAN:
      ++at;
      return;
    case AVRO_INT32:
    case AVRO_INT64:
    case AVRO_ENUM:
      read_varint_bits(at);
      return;
    case AVRO_FLOAT:
      at += 4;
      return;
    case AVRO_DOUBLE:
      at += 8;
      return;
    case AVRO_STRING:
    case AVRO_BYTES:
    case AVRO_FIXED:
      bytes_of(at, node);
      return;
    case AVRO_UNION:
      skip(at, *node.branches[static_cast<std::size_t>(read_long(at))]);
      return;
    case AVRO_RECORD:
      for (const auto& field : node.fields) skip(at, *field.node);
      return;
    case AVRO_MAP:
    case AVRO_ARRAY:
      for (auto count = read_long(at); count != 0; count = read_long(at)) {
        if (count < 0) {
          count = -count;
          read_long(at);  // the block's byte size
        }
        for (std::int64_t i = 0; i < count; ++i) {
          if (node.type == AVRO_MAP) read_bytes(at);
          skip(at, *node.items);
        }
      }
      return;
    default:  // null: no bytes
      return;
  }
}

// Calls `each(key, value_at)` for every item of an array or map block sequence at `at` (key empty
// for arrays), in the order written, until it returns false; `at` ends past the last one read.
template <typename Each>
void for_each_item(const char*& at, const Node& node, Each&& each) {
  for (auto count = read_long(at); count != 0; count = read_long(at)) {
    if (count < 0) {
      count = -count;
      read_long(at);
    }
    for (std::int64_t i = 0; i < count; ++i) {
      const std::string_view key = node.type == AVRO_MAP ? read_bytes(at) : std::string_view();
      if (!each(key, at)) return;
      skip(at, *node.items);
    }
  }
}

}  // namespace

AvroRecord::Position AvroRecord::resolved(Position position) {
  while (position.node->type == AVRO_UNION) {
    position.node = position.node->branches[static_cast<std::size_t>(read_long(position.at))];
  }
  return position;
}

void AvroRecord::view(std::shared_ptr<const Schema> schema, const std::vector<FieldBytes>& fields) {
  schema_ = std::move(schema);
  decimals_used_ = 0;
  members_.resize(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    Member& member = members_[i];
    member.node = fields[i].node;
    member.bytes = fields[i].bytes;
    member.decimal.clear();
    if (member.node->logical == LogicalType::decimal) {
      const char* at = member.bytes.data();
      append_decimal(bytes_of(at, *member.node), member.node->scale, member.decimal);
    }
  }
}

void AvroRecord::clear() {
  members_.clear();
  schema_.reset();
}

void AvroRecord::release_buffers() {
  formatter_ = CellTextFormatter();
  std::string().swap(scratch_);
  std::vector<Member>().swap(members_);
  std::vector<std::unique_ptr<std::string>>().swap(decimals_);
  decimals_used_ = 0;
}

std::optional<std::size_t> AvroRecord::index_of(std::string_view name) const {
  if (!schema_) return std::nullopt;
  const auto& fields = schema_->root->fields;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<FieldValue> AvroRecord::field(std::string_view name) const {
  if (const auto i = index_of(name)) return member_value(*i);
  return std::nullopt;
}

std::string_view AvroRecord::member_name(std::size_t i) const { return schema_->root->fields.at(i).name; }

FieldValue AvroRecord::member_value(std::size_t i) const {
  const Member& member = members_.at(i);
  return value_of({member.node, member.bytes.data()}, member.decimal);
}

FieldValue AvroRecord::value_of(Position position, std::string_view decimal) const {
  const Node& node = *position.node;
  const char* at = position.at;
  switch (node.type) {
    case AVRO_STRING:
      return read_bytes(at);
    case AVRO_BYTES:
    case AVRO_FIXED:
      if (node.logical == LogicalType::decimal) return decimal;
      return bytes_of(at, node);
    case AVRO_INT32:
    case AVRO_INT64:
      return integer_of(at, node);
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
      return double_of(at, node);
    case AVRO_BOOLEAN:
      return *at != 0;
    case AVRO_ENUM:
      return symbol_of(at, node);
    case AVRO_RECORD:
    case AVRO_MAP:
    case AVRO_ARRAY:
      return NestedValue{};
    default:
      return std::monostate{};
  }
}

bool AvroRecord::member_is_null(std::size_t i) const { return members_.at(i).node->type == AVRO_NULL; }

std::optional<std::int64_t> AvroRecord::typed_time_ms(std::string_view name) const {
  const auto i = index_of(name);
  if (!i) return std::nullopt;
  const Member& member = members_[*i];
  const auto logical = member.node->logical;
  if (logical != LogicalType::timestamp_millis && logical != LogicalType::timestamp_micros) return std::nullopt;
  const char* at = member.bytes.data();
  return integer_of(at, *member.node);
}

void AvroRecord::append_text(std::size_t i, std::string& out) const {
  const Member& member = members_.at(i);
  append_value_text({member.node, member.bytes.data()}, member.decimal, out);
}

void AvroRecord::append_value_text(Position position, std::string_view decimal, std::string& out) const {
  const Node& node = *position.node;
  const char* at = position.at;
  switch (node.type) {
    case AVRO_STRING:
      out.append(read_bytes(at));
      return;
    case AVRO_BYTES:
    case AVRO_FIXED:
      out.append(node.logical == LogicalType::decimal ? decimal : bytes_of(at, node));
      return;
    case AVRO_INT32:
    case AVRO_INT64:
      append_integer(integer_of(at, node), out);
      return;
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
      append_double(double_of(at, node), out);
      return;
    case AVRO_BOOLEAN:
      out.append(*at != 0 ? "true" : "false");
      return;
    case AVRO_ENUM:
      out.append(symbol_of(at, node));
      return;
    case AVRO_RECORD:
    case AVRO_MAP:
    case AVRO_ARRAY:
      formatter_.clear();
      append_json(at, node);
      out.append(formatter_.str());
      return;
    default:
      return;  // null: no text
  }
}

std::string_view AvroRecord::decimal_at(Position position) const {
  if (position.node->logical != LogicalType::decimal) return {};
  if (decimals_used_ == decimals_.size()) decimals_.push_back(std::make_unique<std::string>());
  std::string& text = *decimals_[decimals_used_++];
  text.clear();
  const char* at = position.at;
  append_decimal(bytes_of(at, *position.node), position.node->scale, text);
  return text;
}

// One step at a time from the top-level member, each passing over what comes before its target
// (skip): a record's earlier fields, a map's other entries, an array's earlier items.
std::optional<AvroRecord::Position> AvroRecord::walk(const FieldPath& path) const {
  if (path.steps.empty() || path.steps.front().index) return std::nullopt;
  const auto first = index_of(path.steps.front().name);
  if (!first) return std::nullopt;
  Position position{members_.at(*first).node, members_[*first].bytes.data()};
  for (std::size_t s = 1; s < path.steps.size(); ++s) {
    const PathStep& step = path.steps[s];
    const Node& node = *position.node;
    const char* at = position.at;
    std::optional<Position> next;
    if (step.index) {
      if (node.type != AVRO_ARRAY) return std::nullopt;
      std::size_t left = *step.index;
      for_each_item(at, node, [&](std::string_view, const char* item) {
        if (left-- != 0) return true;
        next = Position{node.items, item};
        return false;
      });
    } else if (node.type == AVRO_RECORD) {
      for (const auto& field : node.fields) {
        if (field.name == step.name) {
          next = Position{field.node, at};
          break;
        }
        skip(at, *field.node);
      }
    } else if (node.type == AVRO_MAP) {
      for_each_item(at, node, [&](std::string_view key, const char* item) {
        if (key == step.name) next = Position{node.items, item};  // the last of a repeated key wins
        return true;
      });
    }
    if (!next) return std::nullopt;
    position = resolved(*next);
  }
  return position;
}

std::optional<FieldValue> AvroRecord::at(const FieldPath& path) const {
  if (path.is_top_level()) return field(path.steps.front().name);
  const auto position = walk(path);
  if (!position) return std::nullopt;
  return value_of(*position, decimal_at(*position));
}

bool AvroRecord::append_text_at(const FieldPath& path, std::string& out) const {
  if (path.is_top_level()) {
    const auto i = index_of(path.steps.front().name);
    if (!i) return false;
    append_text(*i, out);
    return true;
  }
  const auto position = walk(path);
  if (!position) return false;
  scratch_decimal_.clear();
  if (position->node->logical == LogicalType::decimal) {
    const char* at = position->at;
    append_decimal(bytes_of(at, *position->node), position->node->scale, scratch_decimal_);
  }
  append_value_text(*position, scratch_decimal_, out);
  return true;
}

bool AvroRecord::visit_members(const FieldPath& path, MemberVisitor& visit) const {
  if (path.steps.empty()) return Record::visit_members(path, visit);
  const auto position = walk(path);
  if (!position || (position->node->type != AVRO_RECORD && position->node->type != AVRO_MAP)) return false;
  const auto member = [&](std::string_view name, Position value) {
    value = resolved(value);
    const std::string_view decimal = decimal_at(value);
    visit.member(name, value_of(value, decimal), value.node->type == AVRO_NULL,
                 [&](std::string& out) { append_value_text(value, decimal, out); });
  };
  const Node& node = *position->node;
  const char* at = position->at;
  if (node.type == AVRO_RECORD) {
    for (const auto& field : node.fields) {
      member(field.name, {field.node, at});
      skip(at, *field.node);
    }
    return true;
  }
  for_each_item(at, node, [&](std::string_view key, const char* item) {
    member(key, {node.items, item});
    return true;
  });
  return true;
}

// The compact JSON of a nested value, as simdjson::minify writes the event's JSON twin: a union as
// its branch's value (no {"type": value} wrapper), a map as an object in the order it was
// written, bytes and fixed as ISO-8859-1 strings, a decimal as its text in a string, a
// timestamp-micros as ms, and a float or double that is not finite as null (JSON has no NaN).
void AvroRecord::append_json(const char*& at, const Node& node) const {
  switch (node.type) {
    case AVRO_NULL:
      return formatter_.null_atom();
    case AVRO_BOOLEAN:
      return *at++ != 0 ? formatter_.true_atom() : formatter_.false_atom();
    case AVRO_INT32:
    case AVRO_INT64:
      return formatter_.number(integer_of(at, node));
    case AVRO_FLOAT:
    case AVRO_DOUBLE: {
      const double number = double_of(at, node);
      return std::isfinite(number) ? formatter_.number(number) : formatter_.null_atom();
    }
    case AVRO_STRING:
      return formatter_.string(read_bytes(at));
    case AVRO_ENUM:
      return formatter_.string(symbol_of(at, node));
    case AVRO_BYTES:
    case AVRO_FIXED:
      scratch_.clear();
      if (node.logical == LogicalType::decimal) {
        append_decimal(bytes_of(at, node), node.scale, scratch_);
      } else {
        latin1_to_utf8(bytes_of(at, node), scratch_);
      }
      return formatter_.string(scratch_);
    case AVRO_UNION:
      return append_json(at, *node.branches[static_cast<std::size_t>(read_long(at))]);
    case AVRO_RECORD:
      formatter_.start_object();
      for (std::size_t i = 0; i < node.fields.size(); ++i) {
        if (i > 0) formatter_.comma();
        formatter_.key(node.fields[i].name);
        append_json(at, *node.fields[i].node);
      }
      return formatter_.end_object();
    case AVRO_MAP:
    case AVRO_ARRAY: {
      const bool map = node.type == AVRO_MAP;
      map ? formatter_.start_object() : formatter_.start_array();
      bool first = true;
      for (auto count = read_long(at); count != 0; count = read_long(at)) {
        if (count < 0) {
          count = -count;
          read_long(at);  // the block's byte size
        }
        for (std::int64_t i = 0; i < count; ++i) {
          if (!first) formatter_.comma();
          first = false;
          if (map) formatter_.key(read_bytes(at));
          append_json(at, *node.items);
        }
      }
      return map ? formatter_.end_object() : formatter_.end_array();
    }
    default:
      return formatter_.null_atom();
  }
}

}  // namespace hbingest::event_formats::avro
