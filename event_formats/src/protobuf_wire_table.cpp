#include "protobuf_wire_table.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <utility>

namespace hbingest::event_formats::pbwire {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

namespace {

// Field numbers below this are looked up in an array: real schemas number their fields from 1 up.
constexpr std::uint32_t kDenseNumbers = 1024;

Kind kind_of(const FD& field) {
  switch (field.type()) {
    case FD::TYPE_INT32:
      return Kind::int32;
    case FD::TYPE_INT64:
      return Kind::int64;
    case FD::TYPE_UINT32:
      return Kind::uint32;
    case FD::TYPE_UINT64:
      return Kind::uint64;
    case FD::TYPE_SINT32:
      return Kind::sint32;
    case FD::TYPE_SINT64:
      return Kind::sint64;
    case FD::TYPE_FIXED32:
      return Kind::fixed32;
    case FD::TYPE_FIXED64:
      return Kind::fixed64;
    case FD::TYPE_SFIXED32:
      return Kind::sfixed32;
    case FD::TYPE_SFIXED64:
      return Kind::sfixed64;
    case FD::TYPE_FLOAT:
      return Kind::float32;
    case FD::TYPE_DOUBLE:
      return Kind::float64;
    case FD::TYPE_BOOL:
      return Kind::boolean;
    case FD::TYPE_ENUM:
      return Kind::enumeration;
    case FD::TYPE_STRING:
      return Kind::string;
    case FD::TYPE_BYTES:
      return Kind::bytes;
    case FD::TYPE_MESSAGE:
      return Kind::message;
    case FD::TYPE_GROUP:
      return Kind::group;
  }
  return Kind::group;
}

WireType wire_type_of(Kind kind) {
  switch (kind) {
    case Kind::fixed64:
    case Kind::sfixed64:
    case Kind::float64:
      return fixed64;
    case Kind::fixed32:
    case Kind::sfixed32:
    case Kind::float32:
      return fixed32;
    case Kind::string:
    case Kind::bytes:
    case Kind::message:
      return length_delimited;
    case Kind::group:
      return start_group;
    default:
      return varint;
  }
}

// The default as the wire would carry it, so that an absent value reads through the same code as
// a present one.
std::uint64_t default_raw(const FD& field) {
  switch (field.type()) {
    case FD::TYPE_INT32:
    case FD::TYPE_SFIXED32:
      return static_cast<std::uint32_t>(field.default_value_int32());
    case FD::TYPE_SINT32: {
      const auto value = static_cast<std::uint32_t>(field.default_value_int32());
      return (value << 1) ^ static_cast<std::uint32_t>(field.default_value_int32() >> 31);
    }
    case FD::TYPE_INT64:
    case FD::TYPE_SFIXED64:
      return static_cast<std::uint64_t>(field.default_value_int64());
    case FD::TYPE_SINT64: {
      const auto value = static_cast<std::uint64_t>(field.default_value_int64());
      return (value << 1) ^ static_cast<std::uint64_t>(field.default_value_int64() >> 63);
    }
    case FD::TYPE_UINT32:
    case FD::TYPE_FIXED32:
      return field.default_value_uint32();
    case FD::TYPE_UINT64:
    case FD::TYPE_FIXED64:
      return field.default_value_uint64();
    case FD::TYPE_FLOAT:
      return std::bit_cast<std::uint32_t>(field.default_value_float());
    case FD::TYPE_DOUBLE:
      return std::bit_cast<std::uint64_t>(field.default_value_double());
    case FD::TYPE_BOOL:
      return field.default_value_bool() ? 1 : 0;
    case FD::TYPE_ENUM:
      return static_cast<std::uint32_t>(field.default_value_enum()->number());
    default:
      return 0;
  }
}

}  // namespace

Shape shape_of(const pb::Descriptor& type) {
  constexpr std::string_view kPackage = "google.protobuf.";
  const std::string_view name = type.full_name();
  if (name.substr(0, kPackage.size()) != kPackage) return Shape::plain;
  const std::string_view local = name.substr(kPackage.size());
  if (local == "Timestamp") {
    const FD* seconds = type.FindFieldByNumber(1);
    const FD* nanos = type.FindFieldByNumber(2);
    const bool shaped = type.field_count() == 2 && seconds != nullptr && nanos != nullptr &&
                        seconds->type() == FD::TYPE_INT64 && nanos->type() == FD::TYPE_INT32 &&
                        !seconds->is_repeated() && !nanos->is_repeated();
    return shaped ? Shape::timestamp : Shape::plain;
  }
  constexpr std::string_view kWrappers[] = {"DoubleValue", "FloatValue", "Int64Value",  "UInt64Value", "Int32Value",
                                            "UInt32Value", "BoolValue",  "StringValue", "BytesValue"};
  if (std::find(std::begin(kWrappers), std::end(kWrappers), local) == std::end(kWrappers)) return Shape::plain;
  const bool shaped = type.field_count() == 1 && type.field(0)->number() == 1 && !type.field(0)->is_repeated() &&
                      type.field(0)->cpp_type() != FD::CPPTYPE_MESSAGE;
  return shaped ? Shape::wrapper : Shape::plain;
}

int Table::find(std::string_view name) const {
  // The size and first byte tell most names apart without a call to memcmp.
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string_view candidate = fields[i].name;
    if (candidate.size() == name.size() && (name.empty() || candidate[0] == name[0]) && candidate == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Table::find_large(std::uint32_t number) const {
  const auto it = std::lower_bound(by_large_number.begin(), by_large_number.end(), std::pair{number, -1});
  return it != by_large_number.end() && it->first == number ? it->second : -1;
}

const Table& WireTables::get(const pb::Descriptor& type) {
  if (auto it = tables_.find(&type); it != tables_.end()) return *it->second;
  // The types a message can hold are made by a work list, not by recursion: a schema may chain
  // thousands of types. Each table is in the map before its fields point anywhere, so that a
  // type holding itself finds its own table; a Table is its own allocation and never moves.
  std::vector<Table*> pending{&make(type)};
  while (!pending.empty()) {
    Table& table = *pending.back();
    pending.pop_back();
    for (Field& field : table.fields) {
      if (field.kind != Kind::message) continue;
      const pb::Descriptor& nested = *field.descriptor->message_type();
      if (auto it = tables_.find(&nested); it != tables_.end()) {
        field.nested = it->second.get();
      } else {
        Table& made = make(nested);
        field.nested = &made;
        pending.push_back(&made);
      }
    }
  }
  return *tables_.at(&type);
}

Table& WireTables::make(const pb::Descriptor& type) {
  Table& table = *tables_.emplace(&type, std::make_unique<Table>()).first->second;
  table.type = &type;
  table.oneof_count = type.oneof_decl_count();
  table.fields.reserve(static_cast<std::size_t>(type.field_count()));
  std::uint32_t largest_small = 0;
  for (int i = 0; i < type.field_count(); ++i) {
    const FD& descriptor = *type.field(i);
    Field field;
    field.descriptor = &descriptor;
    field.name = descriptor.name();
    field.json_key = ",\"" + descriptor.name() + "\":";
    field.number = static_cast<std::uint32_t>(descriptor.number());
    field.kind = kind_of(descriptor);
    field.wire_type = wire_type_of(field.kind);
    field.repeated = descriptor.is_repeated();
    field.packable = descriptor.is_packable();
    field.presence = !field.repeated && descriptor.has_presence();
    field.map = descriptor.is_map();
    const bool proto3 = descriptor.file()->syntax() == pb::FileDescriptor::SYNTAX_PROTO3;
    field.closed_enum = field.kind == Kind::enumeration &&
                        (!proto3 || descriptor.enum_type()->file()->syntax() != pb::FileDescriptor::SYNTAX_PROTO3);
    field.check_utf8 = field.kind == Kind::string && proto3;
    field.oneof = descriptor.containing_oneof() != nullptr ? descriptor.containing_oneof()->index() : -1;
    field.default_raw = default_raw(descriptor);
    if (field.kind == Kind::string || field.kind == Kind::bytes)
      field.default_string = descriptor.default_value_string();
    if (field.kind == Kind::message) field.shape = shape_of(*descriptor.message_type());
    if (field.number < kDenseNumbers) largest_small = std::max(largest_small, field.number);
    table.fields.push_back(std::move(field));
  }
  table.by_small_number.assign(largest_small + 1, 0);
  for (std::size_t i = 0; i < table.fields.size(); ++i) {
    const std::uint32_t number = table.fields[i].number;
    if (number < kDenseNumbers) {
      table.by_small_number[number] = static_cast<std::int32_t>(i) + 1;
    } else {
      table.by_large_number.emplace_back(number, static_cast<int>(i));
    }
  }
  std::sort(table.by_large_number.begin(), table.by_large_number.end());
  table.in_number_order = table.oneof_count == 0;
  for (std::size_t i = 0; i < table.fields.size(); ++i) {
    const Field& field = table.fields[i];
    if (field.repeated || (i > 0 && field.number <= table.fields[i - 1].number)) table.in_number_order = false;
  }
  return table;
}

}  // namespace hbingest::event_formats::pbwire
