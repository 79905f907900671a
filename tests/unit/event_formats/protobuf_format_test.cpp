// decode.format: protobuf over a fake registry. Messages are built here with libprotobuf's dynamic
// messages from the test's own reading of the .proto text, serialized and framed as Confluent's
// serializer frames them; the format must read each field as a JSON twin of the same event reads
// (JsonEvent: same value, same cell text), from .proto text and from base64 of a serialized
// FileDescriptorProto alike; resolve references; keep up with schema evolution; and refuse hostile
// bytes and schemas with a reason, without crashing.
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "default_cells.h"
#include "fake_schema_registry.h"
#include "formats.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/event_formats/format_factory.h"
#include "hbingest/event_formats/json_event.h"
#include "heap_in_use.h"
#include "path_probe.h"
#include "proto_text.h"
#include "record_text.h"

namespace hbingest::event_formats {
namespace {

namespace pb = google::protobuf;
using connectors::RegisteredSchema;
using connectors::SchemaReference;
using connectors::SchemaType;
using keyspec::FieldValue;
using testing::confluent_framed;
using testing::FakeSchemaRegistry;
using testing::parse_text;
using testing::text_of;

// Every kind of field the format reads. Order.Refund is message indexes [0,1], Login [1].
constexpr const char* kShopProto = R"(syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

enum Status { STATUS_UNKNOWN = 0; PAID = 1; SHIPPED = 2; }

message Order {
  message Item { string sku = 1; int32 qty = 2; double price = 3; bytes code = 4; }
  message Refund { string event_id = 1; int64 ts = 2; string reason = 3; }
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  string user = 3;
  int32 count = 4;
  int64 big = 5;
  uint64 huge = 6;
  sint32 delta = 7;
  fixed64 fixed = 8;
  float ratio = 9;
  double amount = 10;
  bool paid = 11;
  bytes blob = 12;
  Status status = 13;
  Item first = 14;
  repeated Item items = 15;
  repeated string tags = 16;
  map<string, int64> counters = 17;
  optional string note = 18;
  oneof payment { string card = 19; int64 voucher = 20; }
  google.protobuf.StringValue coupon = 21;
  google.protobuf.Int64Value points = 22;
  repeated google.protobuf.Timestamp times = 23;
  map<int32, string> by_id = 24;
  uint32 small = 25;
}

message Login {
  message Device { string event_id = 1; int64 ts = 2; string os = 3; }
  string event_id = 1;
  int64 ts = 2;
  string user = 3;
}
)";

// The JSON twin of make_order(): the same event as a producer writing every field, in declaration
// order, would write it (64-bit integers as numbers, enums by name, Timestamps as epoch ms, nested
// bytes as base64, map entries in key order, unset fields with presence as null).
constexpr const char* kOrderAsJson =
    R"({"event_id":"order","ts":1700000000123,"user":"u1","count":-3,"big":9007199254740993,)"
    R"("huge":18446744073709551615,"delta":-5,"fixed":42,"ratio":1.1,"amount":410.0,"paid":true,"blob":"raw",)"
    R"("status":"PAID","first":{"sku":"a","qty":2,"price":12.5,"code":"AQL/"},)"
    R"("items":[{"sku":"b","qty":1,"price":0.1,"code":""},{"sku":"c\"q","qty":0,"price":3.0,"code":""}],)"
    R"("tags":["x","y\n"],"counters":{"a":1,"b":-2},"note":null,"card":"visa","voucher":null,"coupon":"SPRING",)"
    R"("points":null,"times":[1700000000123,-1],"by_id":{"2":"two","10":"ten"},"small":4000000000})";

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// The serialized FileDescriptorProto of a .proto text, base64: the form Apicurio answers with.
std::string base64_descriptor(const std::string& text, const std::string& name = "shop.proto") {
  return base64(parse_text(text, name).SerializeAsString());
}

// The producer's side: the test's own pool (google/protobuf files from the generated pool beneath it).
class Producer {
 public:
  // `files`: name → .proto text, each after what it imports.
  using Files = std::vector<std::pair<std::string, std::string>>;
  explicit Producer(const Files& files) : pool_(pb::DescriptorPool::generated_pool()), factory_(&pool_) {
    for (const auto& [name, text] : files) {
      if (pool_.BuildFile(parse_text(text, name)) == nullptr) throw std::runtime_error("test schema: " + name);
    }
  }
  std::unique_ptr<pb::Message> make(const std::string& type) {
    const pb::Descriptor* descriptor = pool_.FindMessageTypeByName(type);
    if (descriptor == nullptr) throw std::runtime_error("no type " + type);
    return std::unique_ptr<pb::Message>(factory_.GetPrototype(descriptor)->New());
  }

 private:
  pb::DescriptorPool pool_;
  pb::DynamicMessageFactory factory_;
};

// Reflection shorthands for building messages.
const pb::FieldDescriptor* fd(const pb::Message& m, const std::string& name) {
  const auto* field = m.GetDescriptor()->FindFieldByName(name);
  if (field == nullptr) throw std::runtime_error("no field " + name);
  return field;
}
void set_timestamp(pb::Message& ts, std::int64_t seconds, std::int32_t nanos) {
  ts.GetReflection()->SetInt64(&ts, fd(ts, "seconds"), seconds);
  ts.GetReflection()->SetInt32(&ts, fd(ts, "nanos"), nanos);
}
void set_item(pb::Message& item, const std::string& sku, std::int32_t qty, double price, const std::string& code) {
  const auto* r = item.GetReflection();
  r->SetString(&item, fd(item, "sku"), sku);
  r->SetInt32(&item, fd(item, "qty"), qty);
  r->SetDouble(&item, fd(item, "price"), price);
  r->SetString(&item, fd(item, "code"), code);
}
void add_map_entry(pb::Message& m, const std::string& field, const auto& set_key, const auto& set_value) {
  pb::Message* entry = m.GetReflection()->AddMessage(&m, fd(m, field));
  set_key(*entry, entry->GetDescriptor()->map_key());
  set_value(*entry, entry->GetDescriptor()->map_value());
}

Producer shop_producer() { return Producer(Producer::Files{{"shop.proto", kShopProto}}); }

// The event of kOrderAsJson.
std::unique_ptr<pb::Message> make_order(Producer& producer) {
  auto order = producer.make("shop.Order");
  pb::Message& m = *order;
  const auto* r = m.GetReflection();
  r->SetString(&m, fd(m, "event_id"), "order");
  set_timestamp(*r->MutableMessage(&m, fd(m, "ts")), 1700000000, 123456789);
  r->SetString(&m, fd(m, "user"), "u1");
  r->SetInt32(&m, fd(m, "count"), -3);
  r->SetInt64(&m, fd(m, "big"), 9007199254740993);
  r->SetUInt64(&m, fd(m, "huge"), std::numeric_limits<std::uint64_t>::max());
  r->SetInt32(&m, fd(m, "delta"), -5);
  r->SetUInt64(&m, fd(m, "fixed"), 42);
  r->SetFloat(&m, fd(m, "ratio"), 1.1f);
  r->SetDouble(&m, fd(m, "amount"), 410.0);
  r->SetBool(&m, fd(m, "paid"), true);
  r->SetString(&m, fd(m, "blob"), "raw");
  r->SetEnumValue(&m, fd(m, "status"), 1);
  set_item(*r->MutableMessage(&m, fd(m, "first")), "a", 2, 12.5, "\x01\x02\xff");
  set_item(*r->AddMessage(&m, fd(m, "items")), "b", 1, 0.1, "");
  set_item(*r->AddMessage(&m, fd(m, "items")), "c\"q", 0, 3.0, "");
  r->AddString(&m, fd(m, "tags"), "x");
  r->AddString(&m, fd(m, "tags"), "y\n");
  // Entries given out of key order: the text has them in key order.
  for (const auto& entry : std::vector<std::pair<std::string, std::int64_t>>{{"b", -2}, {"a", 1}}) {
    add_map_entry(
        m, "counters",
        [&](pb::Message& e, const pb::FieldDescriptor* f) { e.GetReflection()->SetString(&e, f, entry.first); },
        [&](pb::Message& e, const pb::FieldDescriptor* f) { e.GetReflection()->SetInt64(&e, f, entry.second); });
  }
  r->SetString(&m, fd(m, "card"), "visa");
  pb::Message& coupon = *r->MutableMessage(&m, fd(m, "coupon"));
  coupon.GetReflection()->SetString(&coupon, fd(coupon, "value"), "SPRING");
  set_timestamp(*r->AddMessage(&m, fd(m, "times")), 1700000000, 123000000);
  set_timestamp(*r->AddMessage(&m, fd(m, "times")), -1, 999999999);  // 1 ns before the epoch: -1 ms
  for (const auto& entry : std::vector<std::pair<std::int32_t, std::string>>{{10, "ten"}, {2, "two"}}) {
    add_map_entry(
        m, "by_id",
        [&](pb::Message& e, const pb::FieldDescriptor* f) { e.GetReflection()->SetInt32(&e, f, entry.first); },
        [&](pb::Message& e, const pb::FieldDescriptor* f) { e.GetReflection()->SetString(&e, f, entry.second); });
  }
  r->SetUInt32(&m, fd(m, "small"), 4000000000u);
  return order;
}

// Confluent's message indexes: a zig-zag varint count, then each index; [0] as the single 0 byte.
std::string index_bytes(const std::vector<std::int64_t>& indexes) {
  const auto varint = [](std::string& out, std::int64_t value) {
    auto zigzag = static_cast<std::uint64_t>((value << 1) ^ (value >> 63));
    do {
      out += static_cast<char>((zigzag & 0x7F) | (zigzag > 0x7F ? 0x80 : 0));
      zigzag >>= 7;
    } while (zigzag != 0);
  };
  if (indexes == std::vector<std::int64_t>{0}) return std::string(1, '\0');
  std::string out;
  varint(out, static_cast<std::int64_t>(indexes.size()));
  for (const auto index : indexes) varint(out, index);
  return out;
}

std::string framed(std::int32_t id, const std::vector<std::int64_t>& indexes, const std::string& payload) {
  return confluent_framed(id, index_bytes(indexes) + payload);
}

RegisteredSchema proto_schema(std::int32_t id, std::string text, std::vector<SchemaReference> references = {}) {
  return {id, SchemaType::protobuf, std::move(text), std::move(references)};
}

// Every member of `record` against the JSON twin's: names, values and cell text.
void expect_same_as_json(const Record& record, const std::string& json) {
  JsonEvent twin;
  ASSERT_FALSE(twin.parse(json));
  ASSERT_EQ(record.member_count(), twin.member_count());
  for (std::size_t i = 0; i < twin.member_count(); ++i) {
    SCOPED_TRACE(std::string(twin.member_name(i)));
    EXPECT_EQ(record.member_name(i), twin.member_name(i));
    EXPECT_EQ(record.member_value(i), twin.member_value(i));
    EXPECT_EQ(record.member_is_null(i), twin.member_is_null(i));
    EXPECT_EQ(text_of(record, i), text_of(twin, i));
    EXPECT_EQ(record.field(twin.member_name(i)), twin.field(twin.member_name(i)));
  }
}

std::size_t index_of(const Record& record, std::string_view name) {
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    if (record.member_name(i) == name) return i;
  }
  throw std::runtime_error("no member " + std::string(name));
}

class ProtobufFormatTest : public ::testing::Test {
 protected:
  void SetUp() override { registry_.add(proto_schema(1, kShopProto)); }
  std::unique_ptr<InputFormat> format(SchemaCacheLimits limits = {}) {
    return make_input_format(config::EventFormat::protobuf, &registry_, limits);
  }

  FakeSchemaRegistry registry_;
  Producer producer_ = shop_producer();
};

TEST_F(ProtobufFormatTest, EveryTypeReadsAndRendersAsItsJsonTwin) {
  const auto order = make_order(producer_);
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(1, {0}, order->SerializeAsString())));
  const Record& record = format->record();
  expect_same_as_json(record, kOrderAsJson);

  // What the twin cannot show: the values' types.
  EXPECT_EQ(record.field("ts"), FieldValue(std::int64_t{1700000000123})) << "a Timestamp reads as epoch ms";
  EXPECT_EQ(record.typed_time_ms("ts"), 1700000000123);
  EXPECT_EQ(record.typed_time_ms("user"), std::nullopt);
  EXPECT_EQ(record.typed_time_ms("nope"), std::nullopt);
  EXPECT_EQ(record.field("nope"), std::nullopt);
  EXPECT_EQ(record.field("status"), FieldValue(std::string_view("PAID")));
  EXPECT_EQ(record.field("coupon"), FieldValue(std::string_view("SPRING"))) << "a wrapper reads as its value";
  EXPECT_EQ(record.field("ratio"), FieldValue(1.1)) << "a float reads as the double of its shortest text";
  EXPECT_EQ(record.field("huge"), FieldValue(18446744073709551615.0)) << "above int64: a double, as JSON's";
  EXPECT_EQ(record.field("small"), FieldValue(std::int64_t{4000000000}));
  EXPECT_EQ(record.field("first"), FieldValue(keyspec::NestedValue{}));
  EXPECT_EQ(record.field("note"), FieldValue(std::monostate{})) << "unset with presence: null";
}

// Every path into the record answers as in the JSON twin, in both readings (in place and through
// libprotobuf), but nested bytes: as at the top level, a value and a cell hold them as they are
// (the twin has their base64).
TEST_F(ProtobufFormatTest, EveryPathReadsAsInItsJsonTwin) {
  const auto order = make_order(producer_);
  JsonEvent json;
  ASSERT_FALSE(json.parse(kOrderAsJson));
  const auto twin = path_probe::probe_paths(json);
  ASSERT_GT(twin.size(), 150u);
  for (const auto reading : {ProtobufReading::in_place, ProtobufReading::through_libprotobuf}) {
    SCOPED_TRACE(reading == ProtobufReading::in_place ? "in place" : "through libprotobuf");
    const auto format = make_protobuf_format(registry_, {}, reading);
    ASSERT_FALSE(format->parse(framed(1, {0}, order->SerializeAsString())));
    const Record& record = format->record();
    EXPECT_EQ(path_probe::probe_differences(path_probe::probe_paths(record), twin, {"first.code"}), "");
    EXPECT_EQ(record.at(parse_field_path("first.code")), FieldValue(std::string_view("\x01\x02\xff")));
    EXPECT_EQ(record.at(parse_field_path("times[1]")), FieldValue(std::int64_t{-1})) << "a Timestamp: epoch ms";
    EXPECT_EQ(record.at(parse_field_path("times[1].seconds")), std::nullopt) << "a Timestamp is a value";
    EXPECT_EQ(record.at(parse_field_path("coupon")), FieldValue(std::string_view("SPRING")));
    EXPECT_EQ(record.at(parse_field_path("coupon.value")), std::nullopt) << "a wrapper is a value";
    EXPECT_EQ(record.at(parse_field_path("by_id.10")), FieldValue(std::string_view("ten"))) << "an int key as text";
    EXPECT_EQ(record.at(parse_field_path("by_id.010")), std::nullopt);
    EXPECT_EQ(record.at(parse_field_path("voucher")), FieldValue(std::monostate{})) << "the oneof's other member";
    EXPECT_EQ(record.at(parse_field_path("points.value")), std::nullopt) << "into an unset message";
  }
}

TEST_F(ProtobufFormatTest, TopLevelBytesAreTheBytesAndUnknownEnumNumbersTheNumber) {
  auto order = producer_.make("shop.Order");
  const auto* r = order->GetReflection();
  r->SetString(order.get(), fd(*order, "blob"), std::string("\x00\xff\n", 3));
  r->SetEnumValue(order.get(), fd(*order, "status"), 7);  // proto3 enums are open
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(1, {0}, order->SerializeAsString())));
  const Record& record = format->record();
  EXPECT_EQ(text_of(record, index_of(record, "blob")), std::string("\x00\xff\n", 3));
  EXPECT_EQ(record.field("blob"), FieldValue(std::string_view("\x00\xff\n", 3)));
  EXPECT_EQ(text_of(record, index_of(record, "status")), "7");
  EXPECT_EQ(record.field("status"), FieldValue(std::int64_t{7}));
}

TEST_F(ProtobufFormatTest, NotANumberAndInfinitiesAreTheStringsProtobufJsonWrites) {
  auto order = producer_.make("shop.Order");
  const auto* r = order->GetReflection();
  r->SetDouble(order.get(), fd(*order, "amount"), std::nan(""));
  r->SetFloat(order.get(), fd(*order, "ratio"), -std::numeric_limits<float>::infinity());
  set_item(*r->MutableMessage(order.get(), fd(*order, "first")), "a", 1, std::numeric_limits<double>::infinity(), "");
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(1, {0}, order->SerializeAsString())));
  const Record& record = format->record();
  EXPECT_EQ(text_of(record, index_of(record, "amount")), "NaN");
  EXPECT_EQ(record.field("amount"), FieldValue(std::string_view("NaN")));
  EXPECT_EQ(text_of(record, index_of(record, "ratio")), "-Infinity");
  EXPECT_EQ(text_of(record, index_of(record, "first")), R"({"sku":"a","qty":1,"price":"Infinity","code":""})");
}

TEST_F(ProtobufFormatTest, AnEmptyMessageHasDefaultsForScalarsAndNullsForFieldsWithPresence) {
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(1, {0}, "")));
  const Record& record = format->record();
  expect_same_as_json(
      record,
      R"({"event_id":"","ts":null,"user":"","count":0,"big":0,"huge":0,"delta":0,"fixed":0,"ratio":0.0,)"
      R"("amount":0.0,"paid":false,"blob":"","status":"STATUS_UNKNOWN","first":null,"items":[],"tags":[],)"
      R"("counters":{},"note":null,"card":null,"voucher":null,"coupon":null,"points":null,"times":[],"by_id":{},)"
      R"("small":0})");
  EXPECT_EQ(record.typed_time_ms("ts"), std::nullopt) << "an unset Timestamp is no event time";
}

TEST_F(ProtobufFormatTest, TheBase64DescriptorFormReadsAsTheTextForm) {
  registry_.add(proto_schema(2, base64_descriptor(kShopProto)));
  const auto order = make_order(producer_);
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(2, {0}, order->SerializeAsString())));
  expect_same_as_json(format->record(), kOrderAsJson);
}

TEST_F(ProtobufFormatTest, MessageIndexesSelectNestedAndLaterMessages) {
  const auto format = this->format();
  auto refund = producer_.make("shop.Order.Refund");
  refund->GetReflection()->SetString(refund.get(), fd(*refund, "event_id"), "refund");
  refund->GetReflection()->SetString(refund.get(), fd(*refund, "reason"), "late");
  ASSERT_FALSE(format->parse(framed(1, {0, 1}, refund->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"refund","ts":0,"reason":"late"})");

  auto login = producer_.make("shop.Login");
  login->GetReflection()->SetString(login.get(), fd(*login, "user"), "u9");
  ASSERT_FALSE(format->parse(framed(1, {1}, login->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"","ts":0,"user":"u9"})");

  auto device = producer_.make("shop.Login.Device");
  device->GetReflection()->SetString(device.get(), fd(*device, "os"), "linux");
  ASSERT_FALSE(format->parse(framed(1, {1, 0}, device->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"","ts":0,"os":"linux"})");

  for (const auto& indexes : std::vector<std::vector<std::int64_t>>{{5}, {0, 7}, {1, 0, 0}}) {
    const auto failure = format->parse(framed(1, indexes, ""));
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->reason, "bad_message_index");
    EXPECT_EQ(failure->schema_id, 1);
    EXPECT_NE(failure->message.find("schema id 1"), std::string::npos) << failure->message;
    EXPECT_NE(failure->message.find("message indexes ["), std::string::npos) << failure->message;
  }
}

TEST_F(ProtobufFormatTest, TheEventDecoderWritesTheSameCellsAsForTheJsonTwin) {
  const auto order = make_order(producer_);
  const std::string framed_order = framed(1, {0}, order->SerializeAsString());
  const std::string json = kOrderAsJson;
  for (const bool write_nulls : {false, true}) {
    config::DecodeConfig config;
    config.topic_formats = {{"orders-pb", "protobuf"}};
    config.write_null_fields = write_nulls;
    EventDecoder decoder(config, &registry_);
    DecodedEvent from_protobuf;
    DecodedEvent from_json;
    ASSERT_FALSE(decoder.decode({"orders-pb", framed_order, -1}, from_protobuf));
    const auto protobuf_cells = testing::default_cells(decoder, config, framed_order);
    ASSERT_FALSE(decoder.decode({"orders-json", json, -1}, from_json));
    const auto json_cells = testing::default_cells(decoder, config, json);
    EXPECT_EQ(from_protobuf.event_type, "order");
    EXPECT_EQ(from_protobuf.time_ms, 1700000000123);
    EXPECT_EQ(from_protobuf.time_ms, from_json.time_ms);
    ASSERT_EQ(protobuf_cells.size(), json_cells.size());
    for (std::size_t i = 0; i < json_cells.size(); ++i) {
      EXPECT_EQ(protobuf_cells[i].qualifier, json_cells[i].qualifier);
      EXPECT_EQ(protobuf_cells[i].value, json_cells[i].value) << json_cells[i].qualifier;
    }
  }
}

TEST_F(ProtobufFormatTest, ATimestampOutsideTheCellRangeIsABadTime) {
  auto order = producer_.make("shop.Order");
  order->GetReflection()->SetString(order.get(), fd(*order, "event_id"), "order");
  set_timestamp(*order->GetReflection()->MutableMessage(order.get(), fd(*order, "ts")),
                std::numeric_limits<std::int64_t>::max(), 0);
  config::DecodeConfig config;
  config.format = config::EventFormat::protobuf;
  EventDecoder decoder(config, &registry_);
  DecodedEvent event;
  const auto failure = decoder.decode({"t", framed(1, {0}, order->SerializeAsString()), -1}, event);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_time");
}

// ---- references ----

constexpr const char* kMoneyProto = R"(syntax = "proto3";
package common;
import "common/currency.proto";
message Money { Currency currency = 1; int64 units = 2; })";
constexpr const char* kCurrencyProto = R"(syntax = "proto3";
package common;
enum Currency { EUR = 0; USD = 1; })";
constexpr const char* kPaymentProto = R"(syntax = "proto3";
package pay;
import "common/money.proto";
message Payment { string event_id = 1; int64 ts = 2; common.Money total = 3; })";

TEST_F(ProtobufFormatTest, ReferencesResolveThroughTheRegistryAndTheirOwnReferences) {
  // money.proto as the registry keeps it: base64 of its descriptor, with its own reference.
  registry_.add_version("currency", 1, proto_schema(0, kCurrencyProto));
  registry_.add_version("money", 3,
                        proto_schema(0, base64_descriptor(kMoneyProto, "common/money.proto"),
                                     {{"common/currency.proto", "currency", 1}}));
  registry_.add(proto_schema(7, kPaymentProto, {{"common/money.proto", "money", 3}}));
  Producer producer(Producer::Files{{"common/currency.proto", kCurrencyProto},
                                    {"common/money.proto", kMoneyProto},
                                    {"payment.proto", kPaymentProto}});
  auto payment = producer.make("pay.Payment");
  payment->GetReflection()->SetString(payment.get(), fd(*payment, "event_id"), "paid");
  pb::Message& total = *payment->GetReflection()->MutableMessage(payment.get(), fd(*payment, "total"));
  total.GetReflection()->SetEnumValue(&total, fd(total, "currency"), 1);
  total.GetReflection()->SetInt64(&total, fd(total, "units"), 5);
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(7, {0}, payment->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"paid","ts":0,"total":{"currency":"USD","units":5}})");
  const int calls = registry_.calls();
  ASSERT_FALSE(format->parse(framed(7, {0}, payment->SerializeAsString())));
  EXPECT_EQ(registry_.calls(), calls) << "a schema and its references are fetched once";
}

TEST_F(ProtobufFormatTest, AnUnresolvableImportIsABadSchema) {
  registry_.add(proto_schema(7, kPaymentProto));                                       // no references
  registry_.add(proto_schema(8, kPaymentProto, {{"common/money.proto", "gone", 1}}));  // a reference the registry lacks
  const auto format = this->format();
  auto failure = format->parse(framed(7, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("common/money.proto"), std::string::npos) << failure->message;
  failure = format->parse(framed(8, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("subject 'gone' version 1"), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, AReferenceTheRegistryCannotGiveNowIsUnavailableAndAskedAgain) {
  registry_.add_version("currency", 1, proto_schema(0, kCurrencyProto));
  registry_.add_version("money", 3, proto_schema(0, kMoneyProto, {{"common/currency.proto", "currency", 1}}));
  registry_.add(proto_schema(7, kPaymentProto, {{"common/money.proto", "money", 3}}));
  // The schema itself comes, its reference does not: a registry failing halfway.
  class HalfDown final : public connectors::SchemaRegistry {
   public:
    explicit HalfDown(FakeSchemaRegistry& real) : real_(real) {}
    RegisteredSchema schema_by_id(std::int32_t id) override { return real_.schema_by_id(id); }
    RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) override {
      if (down) throw connectors::SchemaRegistryUnavailable("fake registry: timeout");
      return real_.schema_by_subject_version(subject, version);
    }
    std::string describe() const override { return "fake://half"; }
    bool down = true;

   private:
    FakeSchemaRegistry& real_;
  } registry(registry_);
  const auto format = make_input_format(config::EventFormat::protobuf, &registry);
  const auto failure = format->parse(framed(7, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  registry.down = false;
  EXPECT_FALSE(format->parse(framed(7, {0}, "")));
}

TEST_F(ProtobufFormatTest, ImportCyclesAreBadSchemasNamingTheCycle) {
  // A .proto that imports itself: the subject's schema names itself as its reference.
  constexpr const char* kSelf = R"(syntax = "proto3"; import "self.proto"; message S { string event_id = 1; })";
  registry_.add_version("self", 1, proto_schema(0, kSelf, {{"self.proto", "self", 1}}));
  registry_.add(proto_schema(20, kSelf, {{"self.proto", "self", 1}}));
  // A → B → A.
  registry_.add_version("a", 1, proto_schema(0, R"(syntax = "proto3"; import "b.proto";)", {{"b.proto", "b", 1}}));
  registry_.add_version("b", 1, proto_schema(0, R"(syntax = "proto3"; import "a.proto";)", {{"a.proto", "a", 1}}));
  registry_.add(proto_schema(21, R"(syntax = "proto3"; import "a.proto";)", {{"a.proto", "a", 1}}));
  const auto format = this->format();
  auto failure = format->parse(framed(20, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("import cycle: self.proto → self.proto"), std::string::npos) << failure->message;
  failure = format->parse(framed(21, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("import cycle: a.proto → b.proto → a.proto"), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, ImportsNestedTooDeepAreABadSchema) {
  // Each subject imports the next: a chain of 40 files, each a new name (no cycle).
  for (int i = 0; i < 40; ++i) {
    const std::string next = "f" + std::to_string(i + 1) + ".proto";
    registry_.add_version(
        "f" + std::to_string(i), 1,
        proto_schema(0, "syntax = \"proto3\"; import \"" + next + "\";", {{next, "f" + std::to_string(i + 1), 1}}));
  }
  registry_.add(proto_schema(22, R"(syntax = "proto3"; import "f0.proto";)", {{"f0.proto", "f0", 1}}));
  const auto failure = format()->parse(framed(22, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("deep"), std::string::npos) << failure->message;
}

// ---- schemas that are not ----

TEST_F(ProtobufFormatTest, TextThatDoesNotParseIsABadSchemaWithLineAndColumn) {
  registry_.add(proto_schema(30, "syntax = \"proto3\";\nmessage A {\n  string x = ;\n}\n"));
  const auto failure = format()->parse(framed(30, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("3:14: "), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, ADescriptorThatDoesNotBuildIsABadSchema) {
  pb::FileDescriptorProto file = parse_text(R"(syntax = "proto3"; message A { string x = 1; })", "a.proto");
  file.mutable_message_type(0)->mutable_field(0)->set_type_name(".nowhere.Missing");
  file.mutable_message_type(0)->mutable_field(0)->clear_type();
  registry_.add(proto_schema(31, base64(file.SerializeAsString())));
  registry_.add(proto_schema(32, "AAAA////"));  // base64, but of no descriptor, and no .proto text either
  const auto format = this->format();
  auto failure = format->parse(framed(31, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("nowhere.Missing"), std::string::npos) << failure->message;
  failure = format->parse(framed(32, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  const int calls = registry_.calls();
  EXPECT_EQ(format->parse(framed(31, {0}, ""))->reason, "bad_schema");
  EXPECT_EQ(registry_.calls(), calls) << "a bad schema is remembered as such";
}

TEST_F(ProtobufFormatTest, DeeplyNestedSchemaTextIsRefusedBeforeTheParserRecursesIntoIt) {
  std::string text = "syntax = \"proto3\";\n";
  for (int i = 0; i < 100000; ++i) text += "message M {";
  text += std::string(100000, '}');
  registry_.add(proto_schema(33, text));
  const auto failure = format()->parse(framed(33, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("nests blocks more than"), std::string::npos) << failure->message;
}

// The nesting is counted as protobuf's tokenizer reads the text: a string ends at the end of its
// line (the tokenizer says so, and the parser goes on after it), so a quote without its mate on
// the line hides no braces from the count (it hid a million, and compiler::Parser overflowed the
// stack skipping them: a schema of 11 MB, under what the registry client accepts, crashed the daemon).
TEST_F(ProtobufFormatTest, AnUnclosedStringHidesNoNestingFromTheCount) {
  std::string text = "syntax = \"proto3\";\noption java_package = \"x\n";
  for (int i = 0; i < 1000000; ++i) text += "message M {";
  text += std::string(1000000, '}') + "\"";
  registry_.add(proto_schema(34, text));
  const auto failure = format()->parse(framed(34, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("nests blocks more than"), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, AWellKnownTypeRedefinedWithAnotherShapeReadsAsAPlainMessage) {
  // A schema bringing its own google/protobuf/timestamp.proto whose Timestamp has a string field:
  // reading it as a Timestamp through reflection would abort.
  constexpr const char* kFakeTimestamp = R"(syntax = "proto3"; package google.protobuf;
message Timestamp { string seconds = 1; })";
  constexpr const char* kUses = R"(syntax = "proto3"; import "google/protobuf/timestamp.proto";
message E { string event_id = 1; google.protobuf.Timestamp ts = 2; })";
  registry_.add_version("fake-ts", 1, proto_schema(0, kFakeTimestamp));
  registry_.add(proto_schema(34, kUses, {{"google/protobuf/timestamp.proto", "fake-ts", 1}}));
  pb::DescriptorPool pool;
  ASSERT_TRUE(pool.BuildFile(parse_text(kFakeTimestamp, "google/protobuf/timestamp.proto")));
  ASSERT_TRUE(pool.BuildFile(parse_text(kUses, "e.proto")));
  pb::DynamicMessageFactory factory(&pool);
  std::unique_ptr<pb::Message> e(factory.GetPrototype(pool.FindMessageTypeByName("E"))->New());
  pb::Message& ts = *e->GetReflection()->MutableMessage(e.get(), fd(*e, "ts"));
  ts.GetReflection()->SetString(&ts, fd(ts, "seconds"), "soon");
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(34, {0}, e->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"","ts":{"seconds":"soon"}})");
  EXPECT_EQ(format->record().typed_time_ms("ts"), std::nullopt);
}

// ---- evolution ----

TEST_F(ProtobufFormatTest, TwoVersionsInterleavedEachReadWithItsOwnSchema) {
  // v2: `legacy` removed, `country` added, `score` widened from int32 to int64.
  constexpr const char* kV1 = R"(syntax = "proto3"; package ev;
message Login { string event_id = 1; int64 ts = 2; string user = 3; int32 score = 4; string legacy = 5; })";
  constexpr const char* kV2 = R"(syntax = "proto3"; package ev;
message Login { string event_id = 1; int64 ts = 2; string user = 3; int64 score = 4; string country = 6; })";
  registry_.add(proto_schema(40, kV1));
  registry_.add(proto_schema(41, base64_descriptor(kV2, "login.proto")));
  Producer v1(Producer::Files{{"login.proto", kV1}});
  Producer v2(Producer::Files{{"login.proto", kV2}});
  auto old_login = v1.make("ev.Login");
  old_login->GetReflection()->SetString(old_login.get(), fd(*old_login, "event_id"), "login");
  old_login->GetReflection()->SetInt64(old_login.get(), fd(*old_login, "ts"), 1700000000000);
  old_login->GetReflection()->SetInt32(old_login.get(), fd(*old_login, "score"), -7);
  old_login->GetReflection()->SetString(old_login.get(), fd(*old_login, "legacy"), "old");
  auto new_login = v2.make("ev.Login");
  new_login->GetReflection()->SetString(new_login.get(), fd(*new_login, "event_id"), "login");
  new_login->GetReflection()->SetInt64(new_login.get(), fd(*new_login, "ts"), 1700000000001);
  new_login->GetReflection()->SetInt64(new_login.get(), fd(*new_login, "score"), 5000000000);
  new_login->GetReflection()->SetString(new_login.get(), fd(*new_login, "country"), "PT");
  const auto format = this->format();
  for (int round = 0; round < 3; ++round) {
    ASSERT_FALSE(format->parse(framed(40, {0}, old_login->SerializeAsString())));
    expect_same_as_json(format->record(),
                        R"({"event_id":"login","ts":1700000000000,"user":"","score":-7,"legacy":"old"})");
    ASSERT_FALSE(format->parse(framed(41, {0}, new_login->SerializeAsString())));
    expect_same_as_json(format->record(),
                        R"({"event_id":"login","ts":1700000000001,"user":"","score":5000000000,"country":"PT"})");
  }
  // A v1 payload read with v2's schema: the removed field is skipped, the added one is its default.
  ASSERT_FALSE(format->parse(framed(41, {0}, old_login->SerializeAsString())));
  expect_same_as_json(format->record(), R"({"event_id":"login","ts":1700000000000,"user":"","score":-7,"country":""})");
}

// ---- hostile bytes ----

TEST_F(ProtobufFormatTest, EveryTruncationOfAMessageIsValidOrInvalidNeverACrash) {
  const std::string bytes = make_order(producer_)->SerializeAsString();
  const auto format = this->format();
  int invalid = 0;
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const auto failure = format->parse(framed(1, {0}, bytes.substr(0, size)));
    if (!failure) {  // cut between two fields: a valid message with fewer fields; read them all
      for (std::size_t i = 0; i < format->record().member_count(); ++i) text_of(format->record(), i);
      continue;
    }
    ++invalid;
    EXPECT_EQ(failure->reason, "invalid_protobuf");
    EXPECT_EQ(failure->schema_id, 1);
    EXPECT_NE(failure->message.find("shop.Order"), std::string::npos) << failure->message;
  }
  EXPECT_GT(invalid, static_cast<int>(bytes.size()) / 2) << "most cuts fall inside a field";
  // A string cut short by a byte.
  auto order = producer_.make("shop.Order");
  order->GetReflection()->SetString(order.get(), fd(*order, "user"), "abcdef");
  const std::string user = order->SerializeAsString();
  EXPECT_EQ(format->parse(framed(1, {0}, user.substr(0, user.size() - 1)))->reason, "invalid_protobuf");
  // Truncated frames: inside the schema id, inside the message indexes.
  EXPECT_EQ(format->parse(std::string("\0\0\0", 3))->reason, "truncated_frame");
  EXPECT_EQ(format->parse(confluent_framed(1, "\x04\x00"))->reason, "truncated_frame");
}

TEST_F(ProtobufFormatTest, HostileWireBytesAreInvalid) {
  const auto varint = [](std::uint64_t value) {
    std::string out;
    do {
      out += static_cast<char>((value & 0x7F) | (value > 0x7F ? 0x80 : 0));
      value >>= 7;
    } while (value != 0);
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a string claiming 2^62 bytes", "\x1a" + varint(1ULL << 62) + "abc"},
      {"a string claiming 2^31 bytes", "\x1a" + varint(1ULL << 31) + "abc"},
      {"a varint of 11 bytes", "\x20" + std::string(10, '\xff') + "\x01"},
      {"a nested message claiming 2^62 bytes", "\x72" + varint(1ULL << 62)},
      {"wire type 7", std::string("\x27\x00", 2)},
      {"an end-group tag with no group", "\x24"},
      {"tag 0", std::string("\x00\x00", 2)},
      {"a packed repeated field claiming 2^62 bytes", "\xca\x01" + varint(1ULL << 62)},
      {"a string that is not UTF-8 (proto3)", "\x1a\x02\xc3\x28"},
  };
  const auto format = this->format();
  for (const auto& [what, bytes] : cases) {
    const auto failure = format->parse(framed(1, {0}, bytes));
    ASSERT_TRUE(failure) << what;
    EXPECT_EQ(failure->reason, "invalid_protobuf") << what;
    EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid) << what;
  }
  // What protobuf said about the bytes is in the failure, not in a log line of its own.
  const auto failure = format->parse(framed(1, {0}, "\x1a\x02\xc3\x28"));
  EXPECT_NE(failure->message.find("UTF-8"), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, DeepNestingIsInvalidBeyondTheLimitAndReadWithin) {
  registry_.add(proto_schema(50, R"(syntax = "proto3";
message Node { Node child = 1; string event_id = 2; })"));
  // `levels` Nodes each holding the next in field 1; the innermost has event_id "x".
  // Built inside out: each level's header (tag and length) is known from the size within it, and
  // the headers are joined outermost first at the end (prepending each would copy the whole message
  // per level).
  const auto nested = [](int levels) {
    const std::string innermost = "\x12\x01x";
    std::vector<std::string> headers;  // innermost first
    std::size_t size = innermost.size();
    for (int i = 1; i < levels; ++i) {
      std::string header = "\x0a";
      for (auto n = size;; n >>= 7) {
        header += static_cast<char>((n & 0x7F) | (n > 0x7F ? 0x80 : 0));
        if (n <= 0x7F) break;
      }
      size += header.size();
      headers.push_back(std::move(header));
    }
    std::string bytes;
    bytes.reserve(size);
    for (auto header = headers.rbegin(); header != headers.rend(); ++header) bytes += *header;
    return bytes + innermost;
  };
  const auto format = this->format();
  ASSERT_FALSE(format->parse(framed(50, {0}, nested(50))));
  std::string expected = R"({"child":null,"event_id":"x"})";
  for (int i = 2; i < 50; ++i) expected = R"({"child":)" + expected + R"(,"event_id":""})";
  EXPECT_EQ(text_of(format->record(), 0), expected);
  for (const int levels : {102, 100000}) {
    const auto failure = format->parse(framed(50, {0}, nested(levels)));
    ASSERT_TRUE(failure) << levels;
    EXPECT_EQ(failure->reason, "invalid_protobuf");
  }
}

TEST_F(ProtobufFormatTest, AMillionMessageIndexesAreRefusedByTheFrame) {
  std::string indexes = "\x80\x89\x7a";  // zig-zag varint of 1,000,000
  indexes += std::string(1000000, '\0');
  const auto failure = format()->parse(confluent_framed(1, indexes));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_frame");
  EXPECT_NE(failure->message.find("1000000"), std::string::npos) << failure->message;
}

TEST_F(ProtobufFormatTest, RequiredFieldsOfProto2MustBeThere) {
  constexpr const char* kProto2 = R"(syntax = "proto2";
message R { required string event_id = 1; optional int64 ts = 2; optional string note = 3 [default = "n"]; })";
  registry_.add(proto_schema(60, kProto2));
  const auto format = this->format();
  auto failure = format->parse(framed(60, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "invalid_protobuf");
  EXPECT_NE(failure->message.find("event_id"), std::string::npos) << failure->message;
  ASSERT_FALSE(format->parse(framed(60, {0}, "\x0a\x01x")));
  expect_same_as_json(format->record(), R"({"event_id":"x","ts":null,"note":null})");
}

// The check for required fields is skipped only for types that cannot lack one: a required field
// inside a nested message (of a recursive type, in a repeated field) is still found missing.
TEST_F(ProtobufFormatTest, RequiredFieldsOfNestedMessagesMustBeThere) {
  constexpr const char* kProto2 = R"(syntax = "proto2";
message Top { optional string event_id = 1; repeated Node nodes = 2; }
message Node { optional Node child = 1; optional Leaf leaf = 2; }
message Leaf { required int64 id = 1; })";
  registry_.add(proto_schema(61, kProto2));
  const auto format = this->format();
  // nodes[0].child.leaf is an empty Leaf: its id is missing.
  auto failure = format->parse(framed(61, {0}, std::string("\x0a\x01x\x12\x04\x0a\x02\x12\x00", 9)));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "invalid_protobuf");
  EXPECT_NE(failure->message.find("id"), std::string::npos) << failure->message;
  // With the id (nodes[0].child.leaf.id = 1) it reads.
  ASSERT_FALSE(format->parse(framed(61, {0}, std::string("\x0a\x01x\x12\x06\x0a\x04\x12\x02\x08\x01", 11))));
  // An empty Node: no Leaf set, nothing missing. An empty Leaf lacks its id.
  ASSERT_FALSE(format->parse(framed(61, {1}, "")));
  ASSERT_TRUE(format->parse(framed(61, {2}, "")));
}

// ---- the cache and the registry ----

TEST_F(ProtobufFormatTest, UnknownIdsAreInvalidAndARegistryDownHoldsOnlyNewIds) {
  registry_.add(proto_schema(2, base64_descriptor(kShopProto)));
  const auto format = this->format();
  auto failure = format->parse(framed(99, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "unknown_schema");
  EXPECT_EQ(failure->schema_id, 99);

  const std::string order = make_order(producer_)->SerializeAsString();
  ASSERT_FALSE(format->parse(framed(1, {0}, order)));
  registry_.set_unavailable(true);
  EXPECT_FALSE(format->parse(framed(1, {0}, order))) << "a cached id keeps decoding";
  failure = format->parse(framed(2, {0}, order));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  EXPECT_EQ(failure->reason, "schema_registry_unavailable");
  registry_.set_unavailable(false);
  ASSERT_FALSE(format->parse(framed(2, {0}, order)));
  expect_same_as_json(format->record(), kOrderAsJson);
}

TEST_F(ProtobufFormatTest, ASchemaOfAnotherTypeIsInvalid) {
  registry_.add({3, SchemaType::avro, R"({"type":"record","name":"x","fields":[]})", {}});
  const auto failure = format()->parse(framed(3, {0}, ""));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "wrong_schema_type");
}

TEST_F(ProtobufFormatTest, TheCacheIsBoundedAndASchemaThatLeftIsFetchedAgain) {
  registry_.add(proto_schema(2, base64_descriptor(kShopProto)));
  const std::string order = make_order(producer_)->SerializeAsString();
  const auto format = this->format(SchemaCacheLimits{.max_schemas = 1});
  for (int round = 0; round < 2; ++round) {
    for (const std::int32_t id : {1, 2}) {
      ASSERT_FALSE(format->parse(framed(id, {0}, order)));
      expect_same_as_json(format->record(), kOrderAsJson);
    }
  }
  EXPECT_EQ(format->schema_cache_stats().cached_schemas, 1u);
  EXPECT_EQ(registry_.calls(), 4);
}

TEST_F(ProtobufFormatTest, ALargeMessageDoesNotChangeTheNextOnes) {
  auto big = producer_.make("shop.Order");
  for (int i = 0; i < 20000; ++i) big->GetReflection()->AddString(big.get(), fd(*big, "tags"), "tag");
  const std::string order = make_order(producer_)->SerializeAsString();
  const auto format = this->format();
  for (int round = 0; round < 2; ++round) {
    ASSERT_FALSE(format->parse(framed(1, {0}, big->SerializeAsString())));
    EXPECT_EQ(text_of(format->record(), index_of(format->record(), "tags")).size(), 20000u * 6 + 1);
    ASSERT_FALSE(format->parse(framed(1, {0}, order)));
    expect_same_as_json(format->record(), kOrderAsJson);
  }
}

// A producer's one large event (max_event_bytes allows up to 64 MiB) must not leave the message's
// fields and the record's text buffers at its size for every event after it.
TEST_F(ProtobufFormatTest, ALargeMessagesMemoryIsGivenBackAtTheNextOne) {
  if (hbingest::testing::kSanitizerAllocator) GTEST_SKIP() << "sanitizer allocator: mallinfo2 does not see its heap";
  auto big = producer_.make("shop.Order");
  for (int i = 0; i < 200000; ++i) big->GetReflection()->AddString(big.get(), fd(*big, "tags"), "tag-00000000000042");
  const std::string large = framed(1, {0}, big->SerializeAsString());
  big.reset();
  const std::string small = framed(1, {0}, make_order(producer_)->SerializeAsString());
  const auto format = this->format();
  std::string text;
  ASSERT_FALSE(format->parse(small));
  text = text_of(format->record(), index_of(format->record(), "tags"));
  const auto before = hbingest::testing::heap_in_use();

  ASSERT_FALSE(format->parse(large));
  text = text_of(format->record(), index_of(format->record(), "tags"));  // the text buffer grows to it
  EXPECT_GT(hbingest::testing::heap_in_use(), before + (8u << 20)) << "the large message, while it is read";

  std::string().swap(text);
  ASSERT_FALSE(format->parse(small));
  text = text_of(format->record(), index_of(format->record(), "tags"));
  EXPECT_EQ(text, R"(["x","y\n"])");
  EXPECT_LT(hbingest::testing::heap_in_use(), before + (1u << 20)) << "held after the large message";
}

// ---- protobuf's own log ----

TEST(ProtobufLog, WhatProtobufSaysAboutASchemaGoesToSpdlogNamingTheSchema) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  FakeSchemaRegistry registry;
  registry.add(proto_schema(70, "message A { optional string event_id = 1; }"));  // no syntax statement
  const auto format = make_input_format(config::EventFormat::protobuf, &registry);
  const auto failure = format->parse(framed(70, {0}, ""));
  spdlog::set_default_logger(previous);
  ASSERT_FALSE(failure) << failure->message;
  const auto lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("schema id 70"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("No syntax specified"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace hbingest::event_formats
