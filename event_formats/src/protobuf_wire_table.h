#pragma once
// What reading a Protobuf message's wire bytes in place needs to know of its type, made once per
// message type from its Descriptor (libprotobuf keeps everything about schemas): each field's
// number, name, type, wire type, repetition, presence, oneof, default, and for a message field its
// type's table and whether it reads as a value (Timestamp, wrapper) or a nested object.
// docs/formats.md, "Protobuf"; protobuf_wire.h reads the bytes with it.
//
// Tables point at each other (a message field at its type's table, recursively), and into the
// Descriptors (names, enum types, default strings): they live as long as the WireTables that made
// them, which lives as long as the schema's DescriptorPool. Not thread-safe.

#include <google/protobuf/descriptor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hbingest::event_formats::pbwire {

// A field's type, as far as reading its bytes and its value goes.
enum class Kind : std::uint8_t {
  int32,
  int64,
  uint32,
  uint64,
  sint32,
  sint64,
  fixed32,
  fixed64,
  sfixed32,
  sfixed64,
  float32,
  float64,
  boolean,
  enumeration,
  string,
  bytes,
  message,
  group,  // never read in place: the format reads a message holding one through libprotobuf
};

// Message types read as a value rather than as a nested object.
enum class Shape : std::uint8_t { plain, timestamp, wrapper };

enum WireType : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, start_group = 3, fixed32 = 5 };

struct Table;

struct Field {
  const google::protobuf::FieldDescriptor* descriptor = nullptr;
  std::string_view name;
  // The name as a key of nested JSON, after a comma: `,"name":` (a field name is an identifier,
  // which needs no escape).
  std::string json_key;
  std::uint32_t number = 0;
  Kind kind = Kind::int32;
  WireType wire_type = varint;  // the one an element is written with (unpacked)
  bool repeated = false;
  bool packable = false;            // a repeated scalar: accepted packed or not, whatever the schema says
  bool presence = false;            // unset is null (proto2 optional, proto3 optional, message, oneof member)
  bool map = false;                 // a map: `nested` is its entry type's table
  bool closed_enum = false;         // proto2: a number the enum lacks is not the field's value
  bool check_utf8 = false;          // proto3 string: not UTF-8 is an invalid message
  int oneof = -1;                   // index of its oneof in the table's, -1 for none
  std::uint64_t default_raw = 0;    // the absent value's bits as the wire carries them (varint or fixed)
  std::string_view default_string;  // the absent value of a string or bytes field
  const Table* nested = nullptr;    // a message field's type
  Shape shape = Shape::plain;       // a message field's
};

struct Table {
  const google::protobuf::Descriptor* type = nullptr;
  std::vector<Field> fields;  // declaration order: the record's members
  int oneof_count = 0;
  // Every field singular and outside oneofs, numbered in declaration order: a message written as
  // writers write it (each field once, in number order) can then be read in one pass.
  bool in_number_order = false;
  // Field index by number: dense for the usual small numbers, sorted pairs for the rest.
  std::vector<std::int32_t> by_small_number;  // index + 1, 0 for none
  std::vector<std::pair<std::uint32_t, int>> by_large_number;

  // The index of the field of `number`, -1 for none.
  int find(std::uint32_t number) const {
    if (number < by_small_number.size()) return by_small_number[number] - 1;
    return find_large(number);
  }
  // The index of the field named `name`, -1 for none.
  int find(std::string_view name) const;

 private:
  int find_large(std::uint32_t number) const;
};

// google.protobuf.Timestamp and the wrappers (StringValue, Int64Value, ...), known by name and
// checked by shape: a schema may bring its own file of that name.
Shape shape_of(const google::protobuf::Descriptor& type);

// The tables of one schema's message types, made on first use (with every type a message of it can hold).
class WireTables {
 public:
  const Table& get(const google::protobuf::Descriptor& type);

 private:
  // A table of `type` with its fields, their nested tables not yet set.
  Table& make(const google::protobuf::Descriptor& type);

  std::unordered_map<const google::protobuf::Descriptor*, std::unique_ptr<Table>> tables_;
};

}  // namespace hbingest::event_formats::pbwire
