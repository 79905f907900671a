#include "avro_record.h"

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
double widen(float value) {
  if (!std::isfinite(value)) return static_cast<double>(value);
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
  do {
    *--at = static_cast<char>('0' + static_cast<int>(rest % 10));
    rest /= 10;
  } while (rest != 0);
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

// A union's branch: the value the union holds and its type.
void resolve_union(avro_value_t& value, const Node*& node) {
  while (node->type == AVRO_UNION) {
    int discriminant = 0;
    avro_value_t branch;
    avro_value_get_discriminant(&value, &discriminant);
    avro_value_get_current_branch(&value, &branch);
    value = branch;
    node = node->branches[static_cast<std::size_t>(discriminant)];
  }
}

std::string_view string_of(const avro_value_t& value) {
  const char* text = nullptr;
  std::size_t size = 0;  // with the NUL avro-c adds
  avro_value_get_string(&value, &text, &size);
  return size == 0 ? std::string_view() : std::string_view(text, size - 1);
}

std::string_view bytes_of(const avro_value_t& value, const Node& node) {
  const void* bytes = nullptr;
  std::size_t size = 0;
  if (node.type == AVRO_FIXED) {
    avro_value_get_fixed(&value, &bytes, &size);
  } else {
    avro_value_get_bytes(&value, &bytes, &size);
  }
  return {static_cast<const char*>(bytes), size};
}

std::int64_t integer_of(const avro_value_t& value, const Node& node) {
  if (node.type == AVRO_INT32) {
    std::int32_t number = 0;
    avro_value_get_int(&value, &number);
    return number;
  }
  std::int64_t number = 0;
  avro_value_get_long(&value, &number);
  return node.logical == LogicalType::timestamp_micros ? micros_to_ms(number) : number;
}

double double_of(const avro_value_t& value, const Node& node) {
  if (node.type == AVRO_FLOAT) {
    float number = 0;
    avro_value_get_float(&value, &number);
    return widen(number);
  }
  double number = 0;
  avro_value_get_double(&value, &number);
  return number;
}

bool boolean_of(const avro_value_t& value) {
  int flag = 0;
  avro_value_get_boolean(&value, &flag);
  return flag != 0;
}

std::string_view symbol_of(const avro_value_t& value, const Node& node) {
  int index = 0;
  avro_value_get_enum(&value, &index);
  return node.symbols[static_cast<std::size_t>(index)];  // in range: check_binary
}

}  // namespace

void AvroRecord::view(std::shared_ptr<const Schema> schema) {
  schema_ = std::move(schema);
  const Node& root = *schema_->root;
  const avro_value_t* record = schema_->value.get();
  members_.resize(root.fields.size());
  for (std::size_t i = 0; i < root.fields.size(); ++i) {
    Member& member = members_[i];
    member.node = root.fields[i].node;
    avro_value_get_by_index(record, i, &member.value, nullptr);
    resolve_union(member.value, member.node);
    member.decimal.clear();
    if (member.node->logical == LogicalType::decimal) {
      append_decimal(bytes_of(member.value, *member.node), member.node->scale, member.decimal);
    }
  }
}

void AvroRecord::clear() {
  members_.clear();
  schema_.reset();
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
  const Node& node = *member.node;
  switch (node.type) {
    case AVRO_STRING:
      return string_of(member.value);
    case AVRO_BYTES:
    case AVRO_FIXED:
      if (node.logical == LogicalType::decimal) return std::string_view(member.decimal);
      return bytes_of(member.value, node);
    case AVRO_INT32:
    case AVRO_INT64:
      return integer_of(member.value, node);
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
      return double_of(member.value, node);
    case AVRO_BOOLEAN:
      return boolean_of(member.value);
    case AVRO_ENUM:
      return symbol_of(member.value, node);
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
  return integer_of(member.value, *member.node);
}

void AvroRecord::append_text(std::size_t i, std::string& out) const {
  const Member& member = members_.at(i);
  const Node& node = *member.node;
  switch (node.type) {
    case AVRO_STRING:
      out.append(string_of(member.value));
      return;
    case AVRO_BYTES:
    case AVRO_FIXED:
      out.append(node.logical == LogicalType::decimal ? std::string_view(member.decimal)
                                                      : bytes_of(member.value, node));
      return;
    case AVRO_INT32:
    case AVRO_INT64: {
      char buffer[24];
      const auto written = std::to_chars(buffer, buffer + sizeof(buffer), integer_of(member.value, node));
      out.append(buffer, written.ptr);
      return;
    }
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
      append_double(double_of(member.value, node), out);
      return;
    case AVRO_BOOLEAN:
      out.append(boolean_of(member.value) ? "true" : "false");
      return;
    case AVRO_ENUM:
      out.append(symbol_of(member.value, node));
      return;
    case AVRO_RECORD:
    case AVRO_MAP:
    case AVRO_ARRAY:
      formatter_.clear();
      append_json(member.value, node);
      out.append(formatter_.str());
      return;
    default:
      return;  // null: no text
  }
}

// The compact JSON of a nested value, as simdjson::minify writes the event's JSON twin: a union as
// its branch's value (no {"type": value} wrapper), a map as an object in the order it was
// written, bytes and fixed as ISO-8859-1 strings, a decimal as its text in a string, a
// timestamp-micros as ms, and a float or double that is not finite as null (JSON has no NaN).
void AvroRecord::append_json(const avro_value_t& value, const Node& node) const {
  switch (node.type) {
    case AVRO_NULL:
      return formatter_.null_atom();
    case AVRO_BOOLEAN:
      return boolean_of(value) ? formatter_.true_atom() : formatter_.false_atom();
    case AVRO_INT32:
    case AVRO_INT64:
      return formatter_.number(integer_of(value, node));
    case AVRO_FLOAT:
    case AVRO_DOUBLE: {
      const double number = double_of(value, node);
      return std::isfinite(number) ? formatter_.number(number) : formatter_.null_atom();
    }
    case AVRO_STRING:
      return formatter_.string(string_of(value));
    case AVRO_ENUM:
      return formatter_.string(symbol_of(value, node));
    case AVRO_BYTES:
    case AVRO_FIXED:
      scratch_.clear();
      if (node.logical == LogicalType::decimal) {
        append_decimal(bytes_of(value, node), node.scale, scratch_);
      } else {
        latin1_to_utf8(bytes_of(value, node), scratch_);
      }
      return formatter_.string(scratch_);
    case AVRO_UNION: {
      avro_value_t branch = value;
      const Node* branch_node = &node;
      resolve_union(branch, branch_node);
      return append_json(branch, *branch_node);
    }
    case AVRO_RECORD: {
      formatter_.start_object();
      for (std::size_t i = 0; i < node.fields.size(); ++i) {
        if (i > 0) formatter_.comma();
        avro_value_t child;
        avro_value_get_by_index(&value, i, &child, nullptr);
        formatter_.key(node.fields[i].name);
        append_json(child, *node.fields[i].node);
      }
      return formatter_.end_object();
    }
    case AVRO_MAP:
    case AVRO_ARRAY: {
      const bool map = node.type == AVRO_MAP;
      map ? formatter_.start_object() : formatter_.start_array();
      std::size_t size = 0;
      avro_value_get_size(&value, &size);
      for (std::size_t i = 0; i < size; ++i) {
        if (i > 0) formatter_.comma();
        avro_value_t child;
        const char* key = nullptr;
        avro_value_get_by_index(&value, i, &child, &key);
        if (map) formatter_.key(key != nullptr ? std::string_view(key) : std::string_view());
        append_json(child, *node.items);
      }
      return map ? formatter_.end_object() : formatter_.end_array();
    }
    default:
      return formatter_.null_atom();
  }
}

}  // namespace hbingest::event_formats::avro
