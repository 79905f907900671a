// The Protobuf format's two readings agree: the wire bytes read in place (protobuf_wire.h) and
// libprotobuf's dynamic message read through reflection (the reference, ProtobufReading::
// through_libprotobuf). Generated messages, written here byte by byte from the schema's field table
// (every type, edge values, over-long varints, unknown fields, the wrong wire type for a field,
// singular fields given twice, packed and unpacked repeated fields mixed, map entries missing their
// key or value or given twice, strings that are not UTF-8, closed enums' unknown numbers, groups,
// truncated and trailing bytes), go through both: the same refusal (reason and message), or the
// same members (names, values, text, nulls), typed times and answers to every path into them
// (path_probe.h: nested messages, repeated elements, map values by key, absent steps).
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fake_schema_registry.h"
#include "formats.h"
#include "path_probe.h"
#include "proto_text.h"
#include "protobuf_wire_record.h"
#include "protobuf_wire_table.h"

namespace hbingest::event_formats {
namespace {

namespace pb = google::protobuf;
using connectors::RegisteredSchema;
using connectors::SchemaType;
using pbwire::Field;
using pbwire::Kind;
using pbwire::Table;
using testing::confluent_framed;
using testing::FakeSchemaRegistry;
using testing::parse_text;

constexpr const char* kRich = R"(syntax = "proto3";
package wire;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

enum Kind { KIND_UNKNOWN = 0; A = 1; B = 2; }

message Event {
  message Item { string sku = 1; sint64 qty = 2; double price = 3; bytes code = 4; Kind kind = 5; }
  message Node { Node child = 1; repeated Node kids = 2; string name = 3; map<string, Node> named = 4; }
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6; sint32 s32 = 7; sint64 s64 = 8;
  fixed32 f32 = 9; fixed64 f64 = 10; sfixed32 sf32 = 11; sfixed64 sf64 = 12;
  float fl = 13; double db = 14; bool ok = 15; string text = 16; bytes raw = 17; Kind kind = 18;
  Item item = 19; repeated Item items = 20; repeated int64 packed = 21; repeated string tags = 22;
  map<string, Item> by_sku = 23; map<int64, string> by_id = 24; map<bool, double> by_flag = 25;
  optional string note = 26;
  oneof choice { string card = 27; int64 voucher = 28; Item gift = 29; }
  google.protobuf.StringValue sv = 30; google.protobuf.Int64Value iv = 31; google.protobuf.BytesValue bv = 32;
  google.protobuf.FloatValue fv = 33; google.protobuf.UInt64Value uv = 34; google.protobuf.BoolValue bov = 35;
  repeated google.protobuf.Timestamp times = 36; repeated Kind kinds = 37;
  Node tree = 38;
  repeated sint32 zigzags = 39; repeated fixed32 fixeds = 40; repeated double doubles = 41; repeated bool flags = 42;
  map<uint32, Kind> by_number = 43; map<sint64, google.protobuf.Timestamp> at = 44;
  int32 far = 100000;
}
)";

// proto2: presence for every singular field, defaults, a closed enum, strings left unchecked, a group.
constexpr const char* kLegacy = R"(syntax = "proto2";
package legacy;
enum Color { RED = 3; GREEN = 5; }
message Old {
  optional string id = 1;
  optional int32 n = 2 [default = 7];
  optional Color color = 3 [default = GREEN];
  repeated Color colors = 4;
  optional double ratio = 5 [default = -1.5];
  optional Old next = 6;
  repeated group Part = 7 { optional string p = 8; }
  optional bytes data = 9 [default = "x\001y"];
  optional sint32 delta = 10 [default = -3];
  map<int32, string> by_n = 11;
}
)";

// Writes wire bytes.
// `padding` > 0: that many more bytes than needed (continuation bits over zeros), as some writers
// do; past 10 bytes in all, a varint libprotobuf refuses.
void put_varint(std::uint64_t value, std::string& out, int padding = 0) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  if (padding == 0) {
    out += static_cast<char>(value);
    return;
  }
  out += static_cast<char>(value | 0x80);
  for (int i = 1; i < padding; ++i) out += static_cast<char>(0x80);
  out += '\0';
}
void put_tag(std::uint32_t number, int wire_type, std::string& out) {
  put_varint((std::uint64_t{number} << 3) | static_cast<std::uint64_t>(wire_type), out);
}
void put_fixed(std::uint64_t value, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}
void put_delimited(const std::string& bytes, std::string& out) {
  put_varint(bytes.size(), out);
  out += bytes;
}

// Random messages of a table's type, from its fields.
class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  std::string message(const Table& table, int depth) {
    std::string out;
    const int count = pick(0, depth == 0 ? 14 : 5);
    for (int n = 0; n < count; ++n) {
      const int roll = pick(0, 99);
      if (roll < 6 || table.fields.empty()) {
        unknown(table, out);
        continue;
      }
      const Field& field = table.fields[static_cast<std::size_t>(pick(0, static_cast<int>(table.fields.size()) - 1))];
      if (roll < 10) {  // a wire type other than the field's: libprotobuf keeps it as unknown
        const int wire_types[] = {0, 1, 2, 5};
        const int wire_type = wire_types[pick(0, 3)];
        put_tag(field.number, wire_type, out);
        raw_value(wire_type, out);
        continue;
      }
      if (field.repeated && field.packable && chance(50)) {
        std::string packed;
        for (int i = pick(0, 4); i > 0; --i) element(field, depth, packed);
        put_tag(field.number, 2, out);
        put_delimited(packed, out);
        continue;
      }
      if (field.kind == Kind::group) {
        put_tag(field.number, 3, out);
        put_tag(8, 2, out);
        put_delimited("part", out);
        put_tag(field.number, 4, out);
        continue;
      }
      put_tag(field.number, field.wire_type, out);
      element(field, depth, out);
    }
    if (depth == 0 && chance(3) && !out.empty()) out.pop_back();                     // truncated
    if (depth == 0 && chance(2)) out += static_cast<char>(pick(0, 255));             // a stray byte
    if (depth == 0 && chance(1)) out += std::string("\x0a\xff\xff\xff\xff\x0f", 6);  // a huge length
    return out;
  }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  bool chance(int percent) { return pick(0, 99) < percent; }
  std::uint64_t bits() { return std::uniform_int_distribution<std::uint64_t>()(rng_); }

  std::uint64_t integer() {
    const std::uint64_t edges[] = {0,
                                   1,
                                   static_cast<std::uint64_t>(-1),
                                   static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::min()),
                                   std::numeric_limits<std::int32_t>::max(),
                                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min()),
                                   std::numeric_limits<std::int64_t>::max(),
                                   std::numeric_limits<std::uint64_t>::max(),
                                   std::uint64_t{1} << 31,
                                   std::uint64_t{1} << 32,
                                   1700000000,
                                   999999999,
                                   1000000000};
    if (chance(60)) return edges[pick(0, std::size(edges) - 1)];
    return chance(50) ? bits() : bits() >> pick(1, 63);
  }
  std::string text() {
    const char* texts[] = {"",
                           "a",
                           "sku-1",
                           "ünïcödé",
                           "a\"b\\c\n\t",
                           "\xff",
                           "\xed\xa0\x80",
                           "\xc0\x80",
                           "\xf0\x9f\x98\x80",
                           "\xf4\x90\x80\x80",
                           "\xe2\x82",
                           "0123456789abcdef0123"};
    return texts[pick(0, std::size(texts) - 1)];
  }

  void raw_value(int wire_type, std::string& out) {
    switch (wire_type) {
      case 0:
        return put_varint(integer(), out, chance(10) ? pick(1, 3) : 0);
      case 1:
        return put_fixed(bits(), 8, out);
      case 5:
        return put_fixed(bits(), 4, out);
      default:
        return put_delimited(text(), out);
    }
  }

  void unknown(const Table& table, std::string& out) {
    std::uint32_t number = 0;
    do {
      number = static_cast<std::uint32_t>(chance(50) ? pick(1, 60) : pick(1, (1 << 29) - 1));
    } while (table.find(number) >= 0);
    if (chance(5)) {  // an unknown group
      put_tag(number, 3, out);
      put_tag(1, 0, out);
      put_varint(5, out);
      put_tag(number, 4, out);
      return;
    }
    const int wire_types[] = {0, 1, 2, 5};
    const int wire_type = wire_types[pick(0, 3)];
    put_tag(number, wire_type, out);
    raw_value(wire_type, out);
  }

  void element(const Field& field, int depth, std::string& out) {
    switch (field.kind) {
      case Kind::sint32: {
        const auto value = static_cast<std::int32_t>(integer());
        return put_varint((static_cast<std::uint32_t>(value) << 1) ^ static_cast<std::uint32_t>(value >> 31), out);
      }
      case Kind::sint64: {
        const auto value = static_cast<std::int64_t>(integer());
        return put_varint((static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63), out);
      }
      case Kind::enumeration:
        return put_varint(chance(70) ? static_cast<std::uint64_t>(pick(0, 5)) : integer(), out);
      case Kind::boolean:
        return put_varint(chance(80) ? static_cast<std::uint64_t>(pick(0, 1)) : integer(), out);
      case Kind::float32: {
        const float floats[] = {0.0f,
                                -0.0f,
                                1.1f,
                                -2.5e-3f,
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(),
                                std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::denorm_min()};
        return put_fixed(chance(70) ? std::bit_cast<std::uint32_t>(floats[pick(0, std::size(floats) - 1)]) : bits(), 4,
                         out);
      }
      case Kind::float64: {
        const double doubles[] = {0.0,
                                  -0.0,
                                  0.1,
                                  410.0,
                                  1e300,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::denorm_min(),
                                  9007199254740993.0};
        return put_fixed(chance(70) ? std::bit_cast<std::uint64_t>(doubles[pick(0, std::size(doubles) - 1)]) : bits(),
                         8, out);
      }
      case Kind::fixed32:
      case Kind::sfixed32:
        return put_fixed(integer(), 4, out);
      case Kind::fixed64:
      case Kind::sfixed64:
        return put_fixed(integer(), 8, out);
      case Kind::string:
      case Kind::bytes:
        return put_delimited(text(), out);
      case Kind::message:
        return put_delimited(depth < 4 ? message(*field.nested, depth + 1) : std::string(), out);
      case Kind::group:
        return;
      default:  // int32, int64, uint32, uint64: over-long encodings now and then
        return put_varint(integer(), out, chance(10) ? pick(1, 3) : 0);
    }
  }

  std::mt19937_64 rng_;
};

std::string value_text(const keyspec::FieldValue& value) {
  std::string out = std::to_string(value.index()) + ":";
  if (const auto* s = std::get_if<std::string_view>(&value)) out += std::string(*s);
  if (const auto* n = std::get_if<std::int64_t>(&value)) out += std::to_string(*n);
  if (const auto* d = std::get_if<double>(&value)) out += std::to_string(std::bit_cast<std::uint64_t>(*d));
  if (const auto* b = std::get_if<bool>(&value)) out += *b ? "true" : "false";
  return out;
}

// Every member of a record, its typed times, and what every path into it answers, as one text.
std::string record_text(const Record& record) {
  std::string out;
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    const std::string name(record.member_name(i));
    out += name + "=" + value_text(record.member_value(i)) + (record.member_is_null(i) ? " null " : " ") + "text=";
    record.append_text(i, out);
    out += " field=" + value_text(record.field(name).value());
    const auto ms = record.typed_time_ms(name);
    out += ms ? " time=" + std::to_string(*ms) : "";
    out += "\n";
  }
  return out + path_probe::probe_text(path_probe::probe_paths(record, {.depth = 3, .elements = 2, .max_paths = 2000}));
}

class ProtobufWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = std::make_unique<pb::DescriptorPool>(pb::DescriptorPool::generated_pool());
    ASSERT_NE(pool_->BuildFile(parse_text(kRich, "rich.proto")), nullptr);
    ASSERT_NE(pool_->BuildFile(parse_text(kLegacy, "legacy.proto")), nullptr);
    registry_.add(RegisteredSchema{1, SchemaType::protobuf, kRich, {}});
    registry_.add(RegisteredSchema{2, SchemaType::protobuf, kLegacy, {}});
  }

  // Runs `count` generated messages of `type` (message indexes `indexes` in schema `id`) through
  // both readings; gives how many the format read in place.
  int run(std::int32_t id, const std::string& indexes, const std::string& type, int count, std::uint32_t seed) {
    const Table& table = tables_.get(*pool_->FindMessageTypeByName(type));
    Generator generate(seed);
    int in_place = 0;
    for (int n = 0; n < count; ++n) {
      const std::string payload = confluent_framed(id, indexes + generate.message(table, 0));
      const auto fast_failure = fast_->parse(payload);
      const auto reference_failure = reference_->parse(payload);
      SCOPED_TRACE(type + " message " + std::to_string(n));
      EXPECT_EQ(fast_failure.has_value(), reference_failure.has_value());
      if (fast_failure && reference_failure) {
        EXPECT_EQ(fast_failure->reason, reference_failure->reason);
        EXPECT_EQ(fast_failure->message, reference_failure->message);
        continue;
      }
      if (fast_failure || reference_failure) continue;
      const std::string text = record_text(fast_->record());
      EXPECT_EQ(text, record_text(reference_->record()));
      paths_ += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      if (dynamic_cast<const ProtobufWireRecord*>(&fast_->record()) != nullptr) ++in_place;
      if (HasFailure()) return in_place;  // one message's differences are enough to read
    }
    return in_place;
  }

  std::size_t paths_ = 0;  // lines compared: members and paths
  std::unique_ptr<pb::DescriptorPool> pool_;
  pbwire::WireTables tables_;
  FakeSchemaRegistry registry_;
  std::unique_ptr<InputFormat> fast_ = make_protobuf_format(registry_, {}, ProtobufReading::in_place);
  std::unique_ptr<InputFormat> reference_ = make_protobuf_format(registry_, {}, ProtobufReading::through_libprotobuf);
};

TEST_F(ProtobufWireTest, GeneratedProto3MessagesReadTheSameInPlaceAndThroughLibprotobuf) {
  const int count = 3000;
  const int in_place = run(1, std::string(1, '\0'), "wire.Event", count, 23);
  // Most are read in place (the rest are invalid, or have a form the check leaves to libprotobuf).
  EXPECT_GT(in_place, count / 4);
  EXPECT_GT(paths_, static_cast<std::size_t>(count) * 40) << "paths into nested messages, repeated fields and maps";
}

TEST_F(ProtobufWireTest, GeneratedNestedMessagesReadTheSame) {
  // Message indexes [0, 0] (Event.Item) and [0, 1] (Event.Node, recursive, with a map of itself).
  EXPECT_GT(run(1, std::string("\x04\x00\x00", 3), "wire.Event.Item", 500, 7), 100);
  EXPECT_GT(run(1, std::string("\x04\x00\x02", 3), "wire.Event.Node", 1000, 8), 50);
}

TEST_F(ProtobufWireTest, GeneratedProto2MessagesReadTheSame) {
  // Closed enums, defaults, a group, unchecked strings: what the check leaves to libprotobuf must
  // still read the same.
  EXPECT_GT(run(2, std::string(1, '\0'), "legacy.Old", 2000, 5), 200);
}

}  // namespace
}  // namespace hbingest::event_formats
