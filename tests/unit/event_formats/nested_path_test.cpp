// Nested access (Record::at, append_text_at, visit_members) in every input format: the same event
// as JSON, Avro and Protobuf (read in place and through libprotobuf) answers every path with the
// same value and the same text; what a path cannot find is absent in all of them; hostile documents
// and paths cost what they hold, without recursion into what a walk passes.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "fake_schema_registry.h"
#include "formats.h"
#include "hbingest/event_formats/format_factory.h"
#include "hbingest/event_formats/json_event.h"
#include "path_probe.h"
#include "protobuf_wire_record.h"

namespace hbingest::event_formats {
namespace {

using connectors::RegisteredSchema;
using connectors::SchemaType;
using hbingest::testing::confluent_framed;
using hbingest::testing::FakeSchemaRegistry;
using keyspec::FieldValue;
using keyspec::NestedValue;
using path_probe::probe_paths;
using path_probe::probe_text;

// One order: a nested record with a null inside, an array of records, a map, scalars.
constexpr const char* kOrderJson =
    R"({"id":"o1","payment":{"amount":410.5,"currency":"EUR","card":null},)"
    R"("items":[{"sku":"a","qty":2},{"sku":"b","qty":1}],"attrs":{"region":"eu","tier":"gold"},"total":3})";

constexpr const char* kOrderAvroSchema = R"({"type":"record","name":"Order","fields":[
  {"name":"id","type":"string"},
  {"name":"payment","type":{"type":"record","name":"Payment","fields":[
    {"name":"amount","type":"double"},{"name":"currency","type":"string"},{"name":"card","type":["null","string"]}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"long"}]}}},
  {"name":"attrs","type":{"type":"map","values":"string"}},
  {"name":"total","type":"long"}]})";

constexpr const char* kOrderProto = R"(syntax = "proto3";
package paths;
message Order {
  message Payment { double amount = 1; string currency = 2; optional string card = 3; }
  message Item { string sku = 1; int64 qty = 2; }
  string id = 1;
  Payment payment = 2;
  repeated Item items = 3;
  map<string, string> attrs = 4;
  int64 total = 5;
}
)";

// Avro's binary encoding, written out: zig-zag varints, length-prefixed strings, little-endian doubles.
void avro_long(std::int64_t value, std::string& out) {
  auto bits = (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
  do {
    out += static_cast<char>((bits & 0x7f) | (bits > 0x7f ? 0x80 : 0));
    bits >>= 7;
  } while (bits != 0);
}
void avro_string(const std::string& text, std::string& out) {
  avro_long(static_cast<std::int64_t>(text.size()), out);
  out += text;
}
void little_endian(std::uint64_t bits, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xff);
}

std::string order_avro() {
  std::string out;
  avro_string("o1", out);
  little_endian(std::bit_cast<std::uint64_t>(410.5), 8, out);
  avro_string("EUR", out);
  avro_long(0, out);  // card: the null branch
  avro_long(2, out);  // items: one block of two
  avro_string("a", out);
  avro_long(2, out);
  avro_string("b", out);
  avro_long(1, out);
  avro_long(0, out);
  avro_long(-2, out);  // attrs: a block of two with its byte size
  avro_long(18, out);
  avro_string("region", out);
  avro_string("eu", out);
  avro_string("tier", out);
  avro_string("gold", out);
  avro_long(0, out);
  avro_long(3, out);
  return out;
}

// Protobuf's wire encoding, written out.
void pb_varint(std::uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}
void pb_delimited(int number, const std::string& bytes, std::string& out) {
  pb_varint(static_cast<std::uint64_t>(number) << 3 | 2, out);
  pb_varint(bytes.size(), out);
  out += bytes;
}

std::string order_protobuf() {
  std::string payment;
  pb_varint(1 << 3 | 1, payment);
  little_endian(std::bit_cast<std::uint64_t>(410.5), 8, payment);
  pb_delimited(2, "EUR", payment);
  const auto item = [](const std::string& sku, int qty) {
    std::string out;
    pb_delimited(1, sku, out);
    pb_varint(2 << 3, out);
    pb_varint(static_cast<std::uint64_t>(qty), out);
    return out;
  };
  const auto entry = [](const std::string& key, const std::string& value) {
    std::string out;
    pb_delimited(1, key, out);
    pb_delimited(2, value, out);
    return out;
  };
  std::string out;
  pb_delimited(1, "o1", out);
  pb_delimited(2, payment, out);
  pb_delimited(3, item("a", 2), out);
  pb_delimited(3, item("b", 1), out);
  // Map entries out of key order, and one key given twice: the map reads in key order, the last value.
  pb_delimited(4, entry("tier", "silver"), out);
  pb_delimited(4, entry("region", "eu"), out);
  pb_delimited(4, entry("tier", "gold"), out);
  pb_varint(5 << 3, out);
  pb_varint(3, out);
  return out;
}

std::string text_at(const Record& record, const std::string& path) {
  std::string out = "<";
  if (!record.append_text_at(parse_field_path(path), out)) return "absent";
  return out.substr(1);
}

class NestedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.add(RegisteredSchema{1, SchemaType::avro, kOrderAvroSchema, {}});
    registry_.add(RegisteredSchema{2, SchemaType::protobuf, kOrderProto, {}});
    ASSERT_FALSE(json_.parse(kOrderJson));
    ASSERT_FALSE(avro_->parse(confluent_framed(1, order_avro())));
    const auto protobuf = confluent_framed(2, std::string(1, '\0') + order_protobuf());
    ASSERT_FALSE(in_place_->parse(protobuf));
    ASSERT_FALSE(libprotobuf_->parse(protobuf));
    ASSERT_NE(dynamic_cast<const ProtobufWireRecord*>(&in_place_->record()), nullptr) << "read in place";
    ASSERT_EQ(dynamic_cast<const ProtobufWireRecord*>(&libprotobuf_->record()), nullptr);
  }

  FakeSchemaRegistry registry_;
  JsonEvent json_;
  std::unique_ptr<InputFormat> avro_ = make_input_format(config::EventFormat::avro, &registry_);
  std::unique_ptr<InputFormat> in_place_ = make_protobuf_format(registry_, {}, ProtobufReading::in_place);
  std::unique_ptr<InputFormat> libprotobuf_ = make_protobuf_format(registry_, {}, ProtobufReading::through_libprotobuf);
};

TEST_F(NestedPathTest, EveryPathAnswersTheSameInEveryFormat) {
  const auto expected = probe_paths(json_);
  ASSERT_GT(expected.size(), 40u) << probe_text(expected);
  for (const auto& [name, record] : {std::pair<const char*, const Record*>{"avro", &avro_->record()},
                                     {"protobuf in place", &in_place_->record()},
                                     {"protobuf through libprotobuf", &libprotobuf_->record()}}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(probe_text(probe_paths(*record)), probe_text(expected));
  }
}

TEST_F(NestedPathTest, ValuesAndTextSpelledOut) {
  // Spelled out, so that a mistake the formats share would show too.
  for (const Record* record :
       {static_cast<const Record*>(&json_), &avro_->record(), &in_place_->record(), &libprotobuf_->record()}) {
    const auto at = [&](const char* path) { return record->at(parse_field_path(path)); };
    EXPECT_EQ(at("payment.amount"), FieldValue{410.5});
    EXPECT_EQ(text_at(*record, "payment.amount"), "410.5");
    EXPECT_EQ(at("payment.currency"), FieldValue{std::string_view("EUR")});
    EXPECT_EQ(at("payment.card"), FieldValue{std::monostate{}}) << "a null is there, as null";
    EXPECT_EQ(text_at(*record, "payment.card"), "") << "with no text";
    EXPECT_EQ(at("payment"), FieldValue{NestedValue{}});
    EXPECT_EQ(text_at(*record, "payment"), R"({"amount":410.5,"currency":"EUR","card":null})");
    EXPECT_EQ(at("items[1].sku"), FieldValue{std::string_view("b")});
    EXPECT_EQ(at("items[0].qty"), FieldValue{std::int64_t{2}});
    EXPECT_EQ(text_at(*record, "items[1]"), R"({"sku":"b","qty":1})");
    EXPECT_EQ(at("attrs.tier"), FieldValue{std::string_view("gold")});
    EXPECT_EQ(at("total"), FieldValue{std::int64_t{3}});
    EXPECT_EQ(text_at(*record, "total"), "3");
    // What is not there: absent, not null.
    for (const char* nothing : {"payment.card.number", "payment.nope", "nope.amount", "items[2]", "items[2].sku",
                                "items[4611686018427387904]", "items.sku", "attrs.nope", "attrs[0]", "id.x", "id[0]",
                                "total[0]", "payment[0]", "items[0].sku.x"}) {
      SCOPED_TRACE(nothing);
      EXPECT_EQ(at(nothing), std::nullopt);
      EXPECT_EQ(text_at(*record, nothing), "absent");
    }
  }
}

TEST_F(NestedPathTest, VisitMembersGivesARecordOrAMapAsMembers) {
  for (const Record* record :
       {static_cast<const Record*>(&json_), &avro_->record(), &in_place_->record(), &libprotobuf_->record()}) {
    path_probe::MemberLines payment;
    ASSERT_TRUE(record->visit_members(parse_field_path("payment"), payment));
    EXPECT_EQ(payment.line, " [amount=3:" + std::to_string(std::bit_cast<std::uint64_t>(410.5)) +
                                " '410.5'] [currency=4:EUR 'EUR'] [card=0: null '']");
    path_probe::MemberLines attrs;
    ASSERT_TRUE(record->visit_members(parse_field_path("attrs"), attrs));
    EXPECT_EQ(attrs.line, " [region=4:eu 'eu'] [tier=4:gold 'gold']");
    path_probe::MemberLines item;
    ASSERT_TRUE(record->visit_members(parse_field_path("items[0]"), item));
    EXPECT_EQ(item.names, (std::vector<std::string>{"sku", "qty"}));
    path_probe::MemberLines none;
    for (const char* not_a_record : {"items", "id", "payment.card", "nope", "items[9]"}) {
      EXPECT_FALSE(record->visit_members(parse_field_path(not_a_record), none)) << not_a_record;
    }
    EXPECT_TRUE(none.names.empty());
    path_probe::MemberLines top;
    ASSERT_TRUE(record->visit_members(FieldPath{}, top)) << "an empty path: the top level";
    EXPECT_EQ(top.names, (std::vector<std::string>{"id", "payment", "items", "attrs", "total"}));
  }
}

TEST(JsonNestedPath, ARepeatedNameReadsAsItsLastValueAtEveryLevel) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"o":{"a":1,"b":{"c":"first"},"a":2,"b":{"c":"last"}},"o":{"a":3}})"));
  EXPECT_EQ(event.at(parse_field_path("o.a")), FieldValue{std::int64_t{3}}) << "the last top-level o";
  ASSERT_FALSE(event.parse(R"({"o":{"a":1,"b":{"c":"first"},"a":2,"b":{"c":"last"}}})"));
  EXPECT_EQ(event.at(parse_field_path("o.a")), FieldValue{std::int64_t{2}});
  EXPECT_EQ(event.at(parse_field_path("o.b.c")), FieldValue{std::string_view("last")});
  path_probe::MemberLines members;
  ASSERT_TRUE(event.visit_members(parse_field_path("o"), members));
  EXPECT_EQ(members.names, (std::vector<std::string>{"a", "b", "a", "b"})) << "as members: every occurrence";
}

TEST(JsonNestedPath, NamesWithDotsAndTextAsACellHoldsIt) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"a.b":{"c":[1,2.0,"x\"y",[true,null],{"d":1e21}]}})"));
  EXPECT_EQ(event.at(parse_field_path(R"(a\.b.c[0])")), FieldValue{std::int64_t{1}});
  EXPECT_EQ(text_at(event, R"(a\.b.c[1])"), "2.0") << "a float keeps its .0, as a top-level one";
  EXPECT_EQ(text_at(event, R"(a\.b.c[2])"), "x\"y") << "a string as it is, not quoted";
  EXPECT_EQ(text_at(event, R"(a\.b.c[3])"), "[true,null]");
  EXPECT_EQ(event.at(parse_field_path(R"(a\.b.c[3][1])")), FieldValue{std::monostate{}});
  EXPECT_EQ(text_at(event, R"(a\.b.c[4].d)"), "1e+21");
  EXPECT_EQ(event.at(parse_field_path("a.b")), std::nullopt) << "a dot steps in";
}

// A message nested as deep as the parser takes (simdjson's depth limit, 1024) answers a path of
// kMaxPathSteps steps; one nested 10,000 deep is refused by the parser, before any walk, without
// overflowing the stack. Deep values' text (minified without recursion per level) too.
TEST(JsonNestedPath, DeepDocumentsAnswerBoundedPathsOrAreRefusedWhole) {
  const auto nested = [](int depth) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += R"({"a":[)";
    text += "7";
    for (int i = 0; i < depth; ++i) text += "]}";
    return text;
  };
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"x":)" + nested(500) + "}"));  // 1,001 levels with the top
  std::string path = "x";
  for (std::size_t i = 1; i + 1 < kMaxPathSteps; i += 2) path += ".a[0]";
  ASSERT_EQ(parse_field_path(path).steps.size(), kMaxPathSteps - 1);
  EXPECT_EQ(event.at(parse_field_path(path)), FieldValue{NestedValue{}});
  EXPECT_EQ(event.at(parse_field_path(path + "[1]")), std::nullopt);
  std::string text;
  ASSERT_TRUE(event.append_text_at(parse_field_path(path), text));
  EXPECT_EQ(text.size(), nested(500 - 15).size());

  const auto failure = event.parse(R"({"x":)" + nested(5000) + "}");  // 10,001 levels
  ASSERT_TRUE(failure);
  EXPECT_FALSE(failure->not_an_object);
  EXPECT_EQ(event.at(parse_field_path("x.a[0]")), std::nullopt) << "a refused message has no fields";
}

TEST(JsonNestedPath, AnEmptyViewWithoutDataIsNotJson) {
  JsonEvent event;
  const auto failure = event.parse(std::string_view());  // data() is nullptr: simdjson must not copy from it
  ASSERT_TRUE(failure);
  EXPECT_FALSE(failure->not_an_object);
  EXPECT_EQ(event.at(parse_field_path("a.b")), std::nullopt);
}

// A wide object: each step passes over the members before the one it wants without entering them,
// so a path through 10,000 members each holding a large value reads each once.
TEST(JsonNestedPath, AWideDocumentIsWalkedOnce) {
  std::string text = R"({"o":{)";
  for (int i = 0; i < 10'000; ++i) text += R"("m)" + std::to_string(i) + R"(":[[[[1,2,3]]]],)";
  text += R"("last":{"v":1}}})";
  JsonEvent event;
  ASSERT_FALSE(event.parse(text));
  EXPECT_EQ(event.at(parse_field_path("o.last.v")), FieldValue{std::int64_t{1}});
  EXPECT_EQ(event.at(parse_field_path("o.m9999[0][0][0][2]")), FieldValue{std::int64_t{3}});
}

// Recursive types nested as deep as a path goes (within both formats' nesting bounds) answer a path of
// kMaxPathSteps steps: an Avro linked list through unions, a Protobuf tree in both readings.
TEST(DeepNestedPath, RecursiveAvroAndProtobufAnswerThePathBound) {
  FakeSchemaRegistry registry;
  registry.add(RegisteredSchema{1,
                                SchemaType::avro,
                                R"({"type":"record","name":"L","fields":[{"name":"head","type":
    ["null",{"type":"record","name":"Node","fields":[{"name":"value","type":"long"},{"name":"next","type":["null","Node"]}]}]}]})",
                                {}});
  registry.add(RegisteredSchema{
      2, SchemaType::protobuf, "syntax = \"proto3\";\nmessage Tree { Tree child = 1; int64 value = 2; }\n", {}});
  std::string avro;
  for (int i = 0; i < 31; ++i) {  // each node a union and a record: 62 levels, within Avro's 64
    avro_long(1, avro);           // the Node branch
    avro_long(i, avro);
  }
  avro_long(0, avro);  // the last next: null
  std::string tree;
  for (int i = 59; i >= 0; --i) {
    std::string node;
    if (!tree.empty()) pb_delimited(1, tree, node);
    pb_varint(2 << 3, node);
    pb_varint(static_cast<std::uint64_t>(i), node);
    tree = node;
  }
  std::string avro_path = "head";
  std::string tree_path = "child";  // the top-level message is node 0: child is node 1
  for (std::size_t i = 1; i < kMaxPathSteps; ++i) {
    avro_path += ".next";
    tree_path += ".child";
  }
  avro_path.replace(avro_path.rfind("next"), 4, "value");   // head + 30 nexts + value: node 30
  tree_path.replace(tree_path.rfind("child"), 5, "value");  // 31 childs + value: node 31
  ASSERT_EQ(parse_field_path(avro_path).steps.size(), kMaxPathSteps);
  const auto avro_format = make_input_format(config::EventFormat::avro, &registry);
  const auto failure = avro_format->parse(confluent_framed(1, avro));
  ASSERT_FALSE(failure) << failure->message;
  EXPECT_EQ(avro_format->record().at(parse_field_path(avro_path)), FieldValue{std::int64_t{30}});
  for (const auto reading : {ProtobufReading::in_place, ProtobufReading::through_libprotobuf}) {
    const auto format = make_protobuf_format(registry, {}, reading);
    ASSERT_FALSE(format->parse(confluent_framed(2, std::string(1, '\0') + tree)));
    EXPECT_EQ(format->record().at(parse_field_path(tree_path)), FieldValue{std::int64_t{31}});
    std::string text;
    EXPECT_TRUE(format->record().append_text_at(parse_field_path(tree_path), text));
    EXPECT_EQ(text, "31");
  }
}

TEST_F(NestedPathTest, AvroBlocksOfManyItemsAndAHugeIndex) {
  // An array written as many one-item blocks, some with byte sizes that lie: items are passed one by
  // one (a block's size is not trusted to skip it).
  std::string payload;
  avro_string("o1", payload);
  little_endian(std::bit_cast<std::uint64_t>(1.0), 8, payload);
  avro_string("", payload);
  avro_long(1, payload);  // card: the string branch
  avro_string("visa", payload);
  for (int i = 0; i < 1000; ++i) {
    avro_long(-1, payload);
    avro_long(i % 2 == 0 ? 1 : 0, payload);  // wrong byte sizes
    avro_string("s" + std::to_string(i), payload);
    avro_long(i, payload);
  }
  avro_long(0, payload);
  avro_long(0, payload);  // attrs: empty
  avro_long(0, payload);
  ASSERT_FALSE(avro_->parse(confluent_framed(1, payload)));
  const Record& record = avro_->record();
  EXPECT_EQ(record.at(parse_field_path("items[999].sku")), FieldValue{std::string_view("s999")});
  EXPECT_EQ(record.at(parse_field_path("items[1000]")), std::nullopt);
  EXPECT_EQ(record.at(parse_field_path("items[4611686018427387904]")), std::nullopt);
  EXPECT_EQ(record.at(parse_field_path("payment.card")), FieldValue{std::string_view("visa")}) << "a union's branch";
  EXPECT_EQ(record.at(parse_field_path("total")), FieldValue{std::int64_t{0}});
  path_probe::MemberLines attrs;
  EXPECT_TRUE(record.visit_members(parse_field_path("attrs"), attrs));
  EXPECT_TRUE(attrs.names.empty());
}

}  // namespace
}  // namespace hbingest::event_formats
