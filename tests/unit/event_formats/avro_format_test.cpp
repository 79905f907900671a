// decode.format: avro over a fake registry. Events are written by avro-c itself (avro_value_write)
// and read back: every field's value and cell text equal what JSON gives for the event's JSON
// twin; schema evolution with each message's own writer schema; hostile bytes; the schema cache.
#include <avro.h>
#include <gtest/gtest.h>
#include <algorithm>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "default_cells.h"
#include "fake_schema_registry.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/event_formats/format_factory.h"
#include "hbingest/event_formats/json_event.h"
#include "path_probe.h"
#include "record_text.h"

namespace hbingest::event_formats {
namespace {

using testing::confluent_framed;
using testing::FakeSchemaRegistry;
using testing::text_of;

// --- writing Avro with avro-c -------------------------------------------------------------------

struct SchemaDeleter {
  void operator()(avro_obj_t* schema) const { avro_schema_decref(schema); }
};
struct IfaceDeleter {
  void operator()(avro_value_iface_t* iface) const { avro_value_iface_decref(iface); }
};
struct WriterDeleter {
  void operator()(avro_writer_t_* writer) const { avro_writer_free(writer); }
};

// The Avro binary of one record of `schema_json`, its fields set by `fill`.
std::string avro_bytes(const std::string& schema_json, const std::function<void(avro_value_t&)>& fill) {
  avro_schema_t raw_schema = nullptr;
  if (avro_schema_from_json_length(schema_json.data(), schema_json.size(), &raw_schema) != 0) {
    ADD_FAILURE() << "test schema: " << avro_strerror();
    return {};
  }
  std::unique_ptr<avro_obj_t, SchemaDeleter> schema(raw_schema);
  std::unique_ptr<avro_value_iface_t, IfaceDeleter> iface(avro_generic_class_from_schema(schema.get()));
  struct Value {
    avro_value_t value{};
    ~Value() {
      if (value.iface != nullptr) avro_value_decref(&value);
    }
  } owned;
  avro_value_t& value = owned.value;
  EXPECT_EQ(avro_generic_value_new(iface.get(), &value), 0);
  fill(value);
  std::string buffer(1 << 20, '\0');
  std::unique_ptr<avro_writer_t_, WriterDeleter> writer(avro_writer_memory(buffer.data(), buffer.size()));
  EXPECT_EQ(avro_value_write(writer.get(), &value), 0) << avro_strerror();
  buffer.resize(static_cast<std::size_t>(avro_writer_tell(writer.get())));
  return buffer;
}

avro_value_t field(avro_value_t& record, const char* name) {
  avro_value_t out;
  EXPECT_EQ(avro_value_get_by_name(&record, name, &out, nullptr), 0) << name;
  return out;
}
avro_value_t branch(avro_value_t& value, int index) {
  avro_value_t out;
  EXPECT_EQ(avro_value_set_branch(&value, index, &out), 0);
  return out;
}
void set_string(avro_value_t value, const std::string& text) {
  EXPECT_EQ(avro_value_set_string_len(&value, text.c_str(), text.size() + 1), 0);
}
void set_bytes(avro_value_t value, const std::string& bytes) {
  EXPECT_EQ(avro_value_set_bytes(&value, const_cast<char*>(bytes.data()), bytes.size()), 0);
}
void set_fixed(avro_value_t value, const std::string& bytes) {
  EXPECT_EQ(avro_value_set_fixed(&value, const_cast<char*>(bytes.data()), bytes.size()), 0);
}

// --- the schema with every type, and one event of it with its JSON twin -------------------------

const std::string kOrderSchema = R"({"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"event_id","type":"string"},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
  {"name":"day","type":{"type":"int","logicalType":"date"}},
  {"name":"at","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
  {"name":"fee","type":{"type":"fixed","name":"Money","size":4,"logicalType":"decimal","precision":9,"scale":3}},
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"count","type":"int"},
  {"name":"total","type":"long"},
  {"name":"ratio","type":"float"},
  {"name":"price","type":"double"},
  {"name":"paid","type":"boolean"},
  {"name":"note","type":["null","string"]},
  {"name":"coupon","type":["null","string"]},
  {"name":"choice","type":["int","string","double"]},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
  {"name":"digest","type":{"type":"fixed","name":"Digest","size":4}},
  {"name":"blob","type":"bytes"},
  {"name":"address","type":{"type":"record","name":"Address","fields":[
    {"name":"city","type":"string"},{"name":"zip","type":["null","int"]},
    {"name":"geo","type":{"type":"array","items":"double"}}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"},
    {"name":"status","type":"Status"},{"name":"raw","type":"bytes"},{"name":"ratio","type":"float"},
    {"name":"seen","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"cost","type":"Money"},
    {"name":"pick","type":["null","string","long"]}]}}},
  {"name":"tags","type":{"type":"map","values":"string"}},
  {"name":"attrs","type":{"type":"map","values":["null","long"]}}
]})";

// The same event as a JSON producer writes it (the decimals as their text, the timestamps in ms,
// bytes as ISO-8859-1 code points, unions as their branch's value).
const std::string kOrderJson = R"({"event_id":"order","ts":1700000000123,"ts_us":1700000000123,"day":19675,)"
                               R"("at":45296789,"amount":"12.50","fee":"-0.005",)"
                               R"("id":"4f0c8c1e-9a3b-4c55-8d2e-0123456789ab","count":3,"total":9007199254740993,)"
                               R"("ratio":1.1,"price":410.0,"paid":true,"note":null,"coupon":"SAVE10","choice":"two",)"
                               R"("status":"PAID","digest":"abcd","blob":"xyz",)"
                               R"("address":{"city":"Zürich","zip":null,"geo":[47.37,8.5]},)"
                               R"("items":[{"sku":"a\"1","qty":2,"price":2.0,"status":"NEW","raw":"\u0001éA",)"
                               R"("ratio":0.3,"seen":1700000000123,"cost":"1.250","pick":7},)"
                               R"({"sku":"b","qty":1,"price":1e300,"status":"SHIPPED","raw":"","ratio":-2.5,)"
                               R"("seen":-1,"cost":"0.000","pick":null}],)"
                               R"("tags":{"k":"v","q\"uote":"x\ny"},"attrs":{"a":1,"b":null}})";

void fill_order(avro_value_t& order) {
  set_string(field(order, "event_id"), "order");
  auto value = field(order, "ts");
  avro_value_set_long(&value, 1700000000123);
  value = field(order, "ts_us");
  avro_value_set_long(&value, 1700000000123999);  // floor to ms
  value = field(order, "day");
  avro_value_set_int(&value, 19675);
  value = field(order, "at");
  avro_value_set_int(&value, 45296789);
  set_bytes(field(order, "amount"), std::string("\x04\xe2", 2));       // 1250
  set_fixed(field(order, "fee"), std::string("\xff\xff\xff\xfb", 4));  // -5
  set_string(field(order, "id"), "4f0c8c1e-9a3b-4c55-8d2e-0123456789ab");
  value = field(order, "count");
  avro_value_set_int(&value, 3);
  value = field(order, "total");
  avro_value_set_long(&value, 9007199254740993);
  value = field(order, "ratio");
  avro_value_set_float(&value, 1.1f);
  value = field(order, "price");
  avro_value_set_double(&value, 410.0);
  value = field(order, "paid");
  avro_value_set_boolean(&value, 1);
  value = field(order, "note");
  auto null_branch = branch(value, 0);
  avro_value_set_null(&null_branch);
  value = field(order, "coupon");
  set_string(branch(value, 1), "SAVE10");
  value = field(order, "choice");
  set_string(branch(value, 1), "two");
  value = field(order, "status");
  avro_value_set_enum(&value, 1);
  set_fixed(field(order, "digest"), "abcd");
  set_bytes(field(order, "blob"), "xyz");
  auto address = field(order, "address");
  set_string(field(address, "city"), "Zürich");
  value = field(address, "zip");
  null_branch = branch(value, 0);
  avro_value_set_null(&null_branch);
  auto geo = field(address, "geo");
  for (const double x : {47.37, 8.5}) {
    avro_value_t element;
    avro_value_append(&geo, &element, nullptr);
    avro_value_set_double(&element, x);
  }
  auto items = field(order, "items");
  struct Item {
    const char* sku;
    int qty;
    double price;
    int status;
    std::string raw;
    float ratio;
    std::int64_t seen_us;
    std::string cost;
    int pick;  // -1: null
  };
  for (const auto& item : {Item{"a\"1", 2, 2.0, 0,
                                std::string("\x01\xe9"
                                            "A",
                                            3),
                                0.3f, 1700000000123456, std::string("\x00\x00\x04\xe2", 4), 7},
                           Item{"b", 1, 1e300, 2, "", -2.5f, -1, std::string(4, '\0'), -1}}) {
    avro_value_t element;
    avro_value_append(&items, &element, nullptr);
    set_string(field(element, "sku"), item.sku);
    value = field(element, "qty");
    avro_value_set_int(&value, item.qty);
    value = field(element, "price");
    avro_value_set_double(&value, item.price);
    value = field(element, "status");
    avro_value_set_enum(&value, item.status);
    set_bytes(field(element, "raw"), item.raw);
    value = field(element, "ratio");
    avro_value_set_float(&value, item.ratio);
    value = field(element, "seen");
    avro_value_set_long(&value, item.seen_us);
    set_fixed(field(element, "cost"), item.cost);
    value = field(element, "pick");
    if (item.pick < 0) {
      null_branch = branch(value, 0);
      avro_value_set_null(&null_branch);
    } else {
      auto long_branch = branch(value, 2);
      avro_value_set_long(&long_branch, item.pick);
    }
  }
  auto tags = field(order, "tags");
  for (const auto& [key, text] : {std::pair{"k", "v"}, std::pair{"q\"uote", "x\ny"}}) {
    avro_value_t element;
    avro_value_add(&tags, key, &element, nullptr, nullptr);
    set_string(element, text);
  }
  auto attrs = field(order, "attrs");
  avro_value_t element;
  avro_value_add(&attrs, "a", &element, nullptr, nullptr);
  auto long_branch = branch(element, 1);
  avro_value_set_long(&long_branch, 1);
  avro_value_add(&attrs, "b", &element, nullptr, nullptr);
  null_branch = branch(element, 0);
  avro_value_set_null(&null_branch);
}

connectors::RegisteredSchema avro_schema(std::int32_t id, std::string text) {
  return {id, connectors::SchemaType::avro, std::move(text), {}};
}

std::string order_message(std::int32_t id = 1) { return confluent_framed(id, avro_bytes(kOrderSchema, fill_order)); }

TEST(AvroFormat, EveryTypeReadsAsItsJsonTwin) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kOrderSchema));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto message = order_message();
  ASSERT_FALSE(format->parse(message));
  const Record& avro = format->record();
  JsonEvent json;
  ASSERT_FALSE(json.parse(kOrderJson));
  ASSERT_EQ(avro.member_count(), json.member_count());
  for (std::size_t i = 0; i < json.member_count(); ++i) {
    SCOPED_TRACE(std::string(json.member_name(i)));
    EXPECT_EQ(avro.member_name(i), json.member_name(i));
    EXPECT_EQ(avro.member_value(i), json.member_value(i));
    EXPECT_EQ(avro.member_is_null(i), json.member_is_null(i));
    EXPECT_EQ(text_of(avro, i), text_of(json, i));
  }
  // Spelled out, so that a shared mistake of both sides would show too.
  EXPECT_EQ(avro.field("amount"), keyspec::FieldValue{std::string_view("12.50")});
  EXPECT_EQ(avro.field("fee"), keyspec::FieldValue{std::string_view("-0.005")});
  EXPECT_EQ(avro.field("ts_us"), keyspec::FieldValue{std::int64_t{1700000000123}});
  EXPECT_EQ(avro.field("ratio"), keyspec::FieldValue{1.1});
  EXPECT_EQ(avro.field("note"), keyspec::FieldValue{std::monostate{}});
  EXPECT_EQ(avro.field("address"), keyspec::FieldValue{keyspec::NestedValue{}});
  EXPECT_FALSE(avro.field("absent"));
  EXPECT_EQ(text_of(avro, 20),
            R"([{"sku":"a\"1","qty":2,"price":2.0,"status":"NEW","raw":"\u0001éA","ratio":0.3,)"
            R"("seen":1700000000123,"cost":"1.250","pick":7},{"sku":"b","qty":1,"price":1e+300,"status":"SHIPPED",)"
            R"("raw":"","ratio":-2.5,"seen":-1,"cost":"0.000","pick":null}])");
  EXPECT_EQ(avro.typed_time_ms("ts"), 1700000000123);
  EXPECT_EQ(avro.typed_time_ms("ts_us"), 1700000000123);
  EXPECT_FALSE(avro.typed_time_ms("total")) << "a plain long is no typed time";
  EXPECT_FALSE(avro.typed_time_ms("day"));
  ASSERT_FALSE(format->parse(message));
  EXPECT_EQ(registry.calls(), 1) << "a schema is fetched and parsed once";
}

// Every path into the record (nested records, arrays of records, maps, unions, nulls inside, and
// the steps that find nothing) answers as in the JSON twin, but nested bytes: as at the top level,
// a value and a cell hold them as they are (the twin has their ISO-8859-1 text).
TEST(AvroFormat, EveryPathReadsAsInItsJsonTwin) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kOrderSchema));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  ASSERT_FALSE(format->parse(order_message()));
  JsonEvent json;
  ASSERT_FALSE(json.parse(kOrderJson));
  const auto twin = path_probe::probe_paths(json);
  const auto avro = path_probe::probe_paths(format->record());
  ASSERT_GT(twin.size(), 150u);
  EXPECT_EQ(path_probe::probe_differences(avro, twin, {"items[0].raw"}), "");
  const Record& record = format->record();
  EXPECT_EQ(record.at(parse_field_path("items[0].raw")), keyspec::FieldValue{std::string_view("\x01\xe9"
                                                                                              "A",
                                                                                              3)});
  EXPECT_EQ(record.at(parse_field_path("items[1].cost")), keyspec::FieldValue{std::string_view("0.000")})
      << "a nested decimal: its text";
  EXPECT_EQ(record.at(parse_field_path("items[0].seen")), keyspec::FieldValue{std::int64_t{1700000000123}})
      << "a nested timestamp-micros: ms";
  EXPECT_EQ(record.at(parse_field_path("items[1].pick")), keyspec::FieldValue{std::monostate{}});
  EXPECT_EQ(record.at(parse_field_path("address.geo[1]")), keyspec::FieldValue{8.5});
  EXPECT_EQ(record.at(parse_field_path("attrs.b")), keyspec::FieldValue{std::monostate{}}) << "null inside a map";
  EXPECT_EQ(record.at(parse_field_path("attrs.b.x")), std::nullopt);
  std::string text;
  ASSERT_TRUE(record.append_text_at(parse_field_path(R"(tags.q"uote)"), text));
  EXPECT_EQ(text, "x\ny");
  // A decimal's value views text that stays until the next message, however many are read.
  const auto first = record.at(parse_field_path("items[0].cost"));
  for (int i = 0; i < 100; ++i) record.at(parse_field_path("items[1].cost"));
  EXPECT_EQ(first, keyspec::FieldValue{std::string_view("1.250")});
}

TEST(AvroFormat, DecimalsAndMicrosecondsAtTheirEdges) {
  const std::string schema = R"({"type":"record","name":"D","fields":[
    {"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":4}},
    {"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
    {"name":"wide","type":{"type":"fixed","name":"W","size":20,"logicalType":"decimal","precision":38,"scale":0}}]})";
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, schema));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto decode = [&](const std::string& unscaled, std::int64_t micros, const std::string& wide) {
    const auto bytes = avro_bytes(schema, [&](avro_value_t& record) {
      set_bytes(field(record, "d"), unscaled);
      auto us = field(record, "us");
      avro_value_set_long(&us, micros);
      set_fixed(field(record, "wide"), wide);
    });
    return format->parse(confluent_framed(1, bytes));
  };
  const std::string minus_one_wide(20, '\xff');
  ASSERT_FALSE(decode("", -1, minus_one_wide));
  const Record& record = format->record();
  EXPECT_EQ(text_of(record, 0), "0.0000") << "no bytes: zero";
  EXPECT_EQ(text_of(record, 1), "-1") << "-1 µs is in the millisecond before the epoch";
  EXPECT_EQ(text_of(record, 2), "-1") << "sign-extension bytes beyond 128 bits are fine";
  // The largest and smallest 128-bit values.
  ASSERT_FALSE(decode("\x7f" + std::string(15, '\xff'), -1001, std::string(20, '\0')));
  EXPECT_EQ(text_of(record, 0), "17014118346046923173168730371588410.5727");
  EXPECT_EQ(text_of(record, 1), "-2");
  ASSERT_FALSE(decode("\x80" + std::string(15, '\0'), 999, std::string(20, '\0')));
  EXPECT_EQ(text_of(record, 0), "-17014118346046923173168730371588410.5728");
  EXPECT_EQ(text_of(record, 1), "0");
  const auto failure = decode("", 0, std::string(3, '\0') + "\x80" + std::string(16, '\0'));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "invalid_avro");
  EXPECT_NE(failure->message.find("field wide: decimal of 20 bytes is wider than 128 bits"), std::string::npos)
      << failure->message;
}

TEST(AvroFormat, TheDecoderGivesTheSameCellsAsForTheJsonTwin) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kOrderSchema));
  config::DecodeConfig config;
  config.topic_formats = {{"orders-avro", "avro"}};
  config.columns = config::ColumnsMode::fields;
  config.write_null_fields = true;
  EventDecoder decoder(config, &registry);
  DecodedEvent from_avro, from_json;
  const auto avro = order_message();
  ASSERT_FALSE(decoder.decode({"orders-avro", avro, -1}, from_avro));
  const auto avro_cells = testing::default_cells(decoder, config, avro);
  ASSERT_FALSE(decoder.decode({"orders-json", kOrderJson, -1}, from_json));
  const auto json_cells = testing::default_cells(decoder, config, kOrderJson);
  EXPECT_EQ(from_avro.event_type, "order");
  EXPECT_EQ(from_avro.time_ms, from_json.time_ms);
  ASSERT_EQ(avro_cells.size(), json_cells.size());
  for (std::size_t i = 0; i < json_cells.size(); ++i) {
    EXPECT_EQ(avro_cells[i].qualifier, json_cells[i].qualifier);
    EXPECT_EQ(avro_cells[i].value, json_cells[i].value) << json_cells[i].qualifier;
  }
}

TEST(AvroFormat, ATypedTimestampIsTheEventTimeWhateverTheTimeFormat) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kOrderSchema));
  config::DecodeConfig config;
  config.format = config::EventFormat::avro;
  config.time_field = "ts_us";
  config.time_format = config::TimeFormat::rfc3339;  // would refuse an integer that is not typed
  EventDecoder decoder(config, &registry);
  DecodedEvent event;
  const auto message = order_message();
  ASSERT_FALSE(decoder.decode({"t", message, -1}, event));
  EXPECT_EQ(event.time_ms, 1700000000123);
}

TEST(AvroFormat, NonFiniteNumbersAndATimestampInAUnion) {
  const std::string schema = R"({"type":"record","name":"N","fields":[
    {"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}]},
    {"name":"x","type":"double"},{"name":"nested","type":{"type":"array","items":["float","double"]}}]})";
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, schema));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto bytes = [&](bool with_time) {
    return confluent_framed(1, avro_bytes(schema, [&](avro_value_t& record) {
                              auto ts = field(record, "ts");
                              auto chosen = branch(ts, with_time ? 1 : 0);
                              with_time ? avro_value_set_long(&chosen, 1700000000123) : avro_value_set_null(&chosen);
                              auto x = field(record, "x");
                              avro_value_set_double(&x, std::numeric_limits<double>::infinity());
                              auto nested = field(record, "nested");
                              avro_value_t element;
                              avro_value_append(&nested, &element, nullptr);
                              auto as_float = branch(element, 0);
                              avro_value_set_float(&as_float, std::numeric_limits<float>::quiet_NaN());
                              avro_value_append(&nested, &element, nullptr);
                              auto as_double = branch(element, 1);
                              avro_value_set_double(&as_double, 0.1);
                            }));
  };
  ASSERT_FALSE(format->parse(bytes(true)));
  const Record& record = format->record();
  EXPECT_EQ(record.typed_time_ms("ts"), 1700000000123) << "a [\"null\", timestamp] holding one";
  EXPECT_EQ(text_of(record, 1), "inf");
  EXPECT_EQ(text_of(record, 2), "[null,0.1]") << "JSON has no NaN";
  ASSERT_FALSE(format->parse(bytes(false)));
  EXPECT_FALSE(record.typed_time_ms("ts"));
  EXPECT_TRUE(record.member_is_null(0));
  EXPECT_EQ(record.field("ts"), keyspec::FieldValue{std::monostate{}});
}

TEST(AvroFormat, ALargeMessageThenSmallOnesReadRight) {
  // After a message above 64 KiB the format gives its buffers back at the next small one.
  const std::string schema = R"({"type":"record","name":"B","fields":[{"name":"s","type":"string"},
    {"name":"m","type":{"type":"map","values":"string"}}]})";
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, schema));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto message = [&](const std::string& text) {
    return confluent_framed(1, avro_bytes(schema, [&](avro_value_t& record) {
                              set_string(field(record, "s"), text);
                              auto map = field(record, "m");
                              avro_value_t element;
                              avro_value_add(&map, "k", &element, nullptr, nullptr);
                              set_string(element, text);
                            }));
  };
  const std::string large(40000, 'x');
  ASSERT_FALSE(format->parse(message(large)));
  EXPECT_EQ(text_of(format->record(), 1), R"({"k":")" + large + R"("})");
  for (const std::string small : {"a", "bc"}) {
    ASSERT_FALSE(format->parse(message(small)));
    EXPECT_EQ(format->record().field("s"), keyspec::FieldValue{std::string_view(small)});
    EXPECT_EQ(text_of(format->record(), 1), R"({"k":")" + small + R"("})");
  }
}

// --- evolution ----------------------------------------------------------------------------------

const std::string kLoginV1 = R"({"type":"record","name":"Login","fields":[
  {"name":"event_id","type":"string"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"attempts","type":"int"},{"name":"legacy","type":"string"}]})";
const std::string kLoginV2 = R"({"type":"record","name":"Login","fields":[
  {"name":"event_id","type":"string"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"attempts","type":"long"},{"name":"region","type":"string","default":"eu"}]})";

TEST(AvroFormat, EachMessageIsReadWithItsOwnWriterSchema) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kLoginV1));
  registry.add(avro_schema(2, kLoginV2));
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto v1 = confluent_framed(1, avro_bytes(kLoginV1, [](avro_value_t& record) {
                                     set_string(field(record, "event_id"), "login");
                                     auto value = field(record, "ts");
                                     avro_value_set_long(&value, 1700000000001);
                                     value = field(record, "attempts");
                                     avro_value_set_int(&value, 3);
                                     set_string(field(record, "legacy"), "old");
                                   }));
  const auto v2 = confluent_framed(2, avro_bytes(kLoginV2, [](avro_value_t& record) {
                                     set_string(field(record, "event_id"), "login");
                                     auto value = field(record, "ts");
                                     avro_value_set_long(&value, 1700000000002);
                                     value = field(record, "attempts");
                                     avro_value_set_long(&value, 5000000000);
                                     set_string(field(record, "region"), "us");
                                   }));
  for (int round = 0; round < 3; ++round) {
    ASSERT_FALSE(format->parse(v1));
    const Record& record = format->record();
    EXPECT_EQ(record.field("attempts"), keyspec::FieldValue{std::int64_t{3}});
    EXPECT_EQ(record.field("legacy"), keyspec::FieldValue{std::string_view("old")});
    EXPECT_FALSE(record.field("region"));
    EXPECT_EQ(record.typed_time_ms("ts"), 1700000000001);
    ASSERT_FALSE(format->parse(v2));
    EXPECT_EQ(record.field("attempts"), keyspec::FieldValue{std::int64_t{5000000000}});
    EXPECT_EQ(record.field("region"), keyspec::FieldValue{std::string_view("us")});
    EXPECT_FALSE(record.field("legacy"));
    EXPECT_EQ(record.typed_time_ms("ts"), 1700000000002);
  }
  EXPECT_EQ(registry.calls(), 2);
}

// --- hostile bytes ------------------------------------------------------------------------------

// A zig-zag varint, as Avro writes a long.
std::string varint(std::int64_t value) {
  auto bits = (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
  std::string out;
  while (bits >= 0x80) {
    out += static_cast<char>((bits & 0x7F) | 0x80);
    bits >>= 7;
  }
  out += static_cast<char>(bits);
  return out;
}

class AvroHostileBytes : public ::testing::Test {
 protected:
  // The failure for `payload` framed with a schema of one field of type `field_type`.
  std::optional<DecodeFailure> parse(const std::string& field_type, const std::string& payload) {
    const auto id = next_id_++;
    registry_.add(avro_schema(id, R"({"type":"record","name":"R","fields":[{"name":"f","type":)" + field_type + "}]}"));
    return format_->parse(confluent_framed(id, payload));
  }
  // Expects an invalid_avro failure whose message holds `text`.
  void expect_invalid(const std::optional<DecodeFailure>& failure, const std::string& text) {
    ASSERT_TRUE(failure) << "expected: " << text;
    EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid);
    EXPECT_EQ(failure->reason, "invalid_avro") << failure->message;
    EXPECT_NE(failure->message.find(text), std::string::npos) << failure->message;
    EXPECT_NE(failure->message.find("schema id "), std::string::npos) << failure->message;
  }

  FakeSchemaRegistry registry_;
  std::unique_ptr<InputFormat> format_ = make_input_format(config::EventFormat::avro, &registry_);
  std::int32_t next_id_ = 1;
};

constexpr std::int64_t k2To62 = std::int64_t{1} << 62;

TEST_F(AvroHostileBytes, EveryTruncationOfAValidMessageIsInvalid) {
  registry_.add(avro_schema(100, kOrderSchema));
  const auto message = order_message(100);
  for (std::size_t size = 5; size < message.size(); ++size) {
    const auto failure = format_->parse(std::string_view(message).substr(0, size));
    ASSERT_TRUE(failure) << size;
    EXPECT_EQ(failure->reason, "invalid_avro");
    EXPECT_EQ(failure->schema_id, 100);
  }
  ASSERT_FALSE(format_->parse(message));
  EXPECT_EQ(format_->parse(std::string_view(message).substr(0, 3))->reason, "truncated_frame");
}

TEST_F(AvroHostileBytes, TrailingBytesAreCounted) {
  expect_invalid(parse(R"("long")", varint(7) + "abc"), "3 trailing bytes after the record (it ends at byte 1)");
}

TEST_F(AvroHostileBytes, HugeAndNegativeLengths) {
  expect_invalid(parse(R"("string")", varint(k2To62) + "abc"), "field f: truncated: string length 4611686018427387904");
  expect_invalid(parse(R"("bytes")", varint(-5) + "abc"), "field f: bytes length -5 is negative");
  expect_invalid(parse(R"("bytes")", varint(std::int64_t{1} << 31) + "abc"), "bytes length 2147483648");
  expect_invalid(parse(R"({"type":"map","values":"string"})", varint(1) + varint(k2To62) + "k"),
                 "field f[0]: truncated: map key length 4611686018427387904");
  expect_invalid(parse(R"("long")", std::string(11, '\xff')), "long is a varint longer than 10 bytes");
  expect_invalid(parse(R"("int")", varint(std::int64_t{1} << 40)), "int 1099511627776 is out of the int range");
}

TEST_F(AvroHostileBytes, AHugeArrayCountFailsFastWithoutAllocating) {
  // avro-c would append items one by one: 2^62 nulls never end. Refused before it reads.
  expect_invalid(parse(R"({"type":"array","items":"null"})", varint(k2To62) + varint(0)),
                 "a block of 4611686018427387904 items at byte 0: more items in all than the message has bytes");
  expect_invalid(parse(R"({"type":"array","items":"long"})", varint(k2To62) + "ab"),
                 "truncated: a block of 4611686018427387904 items at byte 0, only 2 bytes left");
  expect_invalid(parse(R"({"type":"array","items":{"type":"record","name":"E","fields":[]}})",
                       varint(-k2To62) + varint(0) + varint(0)),
                 "more items in all than the message has bytes");
  expect_invalid(parse(R"({"type":"array","items":"null"})", varint(INT64_MIN)), "block count -2^63");
  // As many zero-byte items as the message has bytes are fine.
  EXPECT_FALSE(parse(R"({"type":"array","items":"null"})", varint(2) + varint(0)));
  expect_invalid(parse(R"({"type":"array","items":"null"})", varint(3) + varint(0)), "more items in all");
}

TEST_F(AvroHostileBytes, IndexesOutOfRange) {
  expect_invalid(parse(R"({"type":"enum","name":"E","symbols":["A","B"]})", varint(2)),
                 "field f: enum index 2 is out of range (E has 2 symbols)");
  expect_invalid(parse(R"({"type":"enum","name":"E","symbols":["A","B"]})", varint(-1)), "enum index -1");
  expect_invalid(parse(R"(["null","long"])", varint(2)), "union branch 2 is out of range (the union has 2 branches)");
  expect_invalid(parse(R"(["null","long"])", varint(-1)), "union branch -1 is out of range");
}

TEST_F(AvroHostileBytes, DeepMessagesOfARecursiveSchemaAreRefused) {
  const std::string list = R"({"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]})";
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += varint(1);
  deep += varint(0);
  expect_invalid(parse(R"(["null",)" + list + "]", deep), "nested deeper than 64 levels");
  std::string shallow;
  for (int i = 0; i < 10; ++i) shallow += varint(1);
  shallow += varint(0);
  ASSERT_FALSE(parse(R"(["null",)" + list + "]", shallow));
  EXPECT_EQ(text_of(format_->record(), 0),
            R"({"next":{"next":{"next":{"next":{"next":{"next":{"next":{"next":{"next":{"next":null}}}}}}}}}})");
}

// --- schemas ------------------------------------------------------------------------------------

TEST_F(AvroHostileBytes, BadSchemasAreInvalidOnceAndForAll) {
  const auto bad = [&](const std::string& text, const std::string& why) {
    const auto id = next_id_++;
    registry_.add(avro_schema(id, text));
    const auto calls = registry_.calls();
    for (int i = 0; i < 2; ++i) {
      const auto failure = format_->parse(confluent_framed(id, varint(0)));
      ASSERT_TRUE(failure) << text;
      EXPECT_EQ(failure->reason, "bad_schema") << text;
      EXPECT_NE(failure->message.find(why), std::string::npos) << failure->message;
    }
    EXPECT_EQ(registry_.calls(), calls + 1) << "a bad schema is remembered";
  };
  bad("not json", "not valid JSON");
  bad(R"({"type":"record","name":"R"})", "avro-c cannot parse it");
  // JSON of the wrong type where a name or a namespace goes: a bad schema, not an exception that
  // stops the daemon at this message at every restart.
  bad(R"({"type":"record","name":1,"fields":[]})", "avro-c cannot parse it");
  bad(R"({"type":"record","name":"R","fields":[{"name":"f","type":{"type":"enum","name":[],"symbols":["A"]}}]})",
      "avro-c cannot parse it");
  bad(R"({"type":"record","name":"R","fields":[{"name":"f","type":"Unknown"}]})", "avro-c cannot parse it");
  bad(R"("string")", "not a record");
  std::string deep = R"("long")";
  for (int i = 0; i < 70; ++i)
    deep = R"({"type":"record","name":"R)" + std::to_string(i) + R"(","fields":[{"name":"f","type":)" + deep + "}]}";
  bad(deep, "nests deeper than 64");
  std::string deep_arrays = R"("long")";
  for (int i = 0; i < 5000; ++i) deep_arrays = R"({"type":"array","items":)" + deep_arrays + "}";
  bad(R"({"type":"record","name":"R","fields":[{"name":"f","type":)" + deep_arrays + "}]}", "nests deeper than 64");
  // {"type": {"type": ...}} wraps a type in itself without a record, array or map around it: still
  // a level of nesting (once walked by recursion that counted it not at all, and overflowed the stack).
  constexpr int kWraps = 300000;
  std::string wrapped;
  for (int i = 0; i < kWraps; ++i) wrapped += R"({"type":)";
  wrapped += R"("long")" + std::string(kWraps, '}');
  bad(R"({"type":"record","name":"R","fields":[{"name":"f","type":)" + wrapped + "}]}", "nests deeper than 64");
}

TEST(AvroFormat, ReferencesToOtherSubjectsAreDefinedWhereFirstUsed) {
  FakeSchemaRegistry registry;
  auto country = avro_schema(0, R"({"type":"enum","name":"Country","namespace":"shop","symbols":["CH","DE"]})");
  registry.add_version("country-value", 3, country);
  registry.add_version("address-value", 1, [&] {
    auto address = avro_schema(0, R"({"type":"record","name":"Address","namespace":"shop","fields":[
                                     {"name":"city","type":"string"},{"name":"country","type":"shop.Country"}]})");
    address.references = {{"shop.Country", "country-value", 3}};
    return address;
  }());
  const std::string text = R"({"type":"record","name":"Customer","namespace":"shop","fields":[
    {"name":"home","type":"Address"},{"name":"work","type":["null","shop.Address"]},{"name":"born","type":"Country"}]})";
  auto customer = avro_schema(9, text);
  customer.references = {{"shop.Address", "address-value", 1}};
  registry.add(customer);
  const std::string full = R"({"type":"record","name":"Customer","namespace":"shop","fields":[
    {"name":"home","type":{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},
      {"name":"country","type":{"type":"enum","name":"Country","symbols":["CH","DE"]}}]}},
    {"name":"work","type":["null","Address"]},{"name":"born","type":"Country"}]})";
  const auto bytes = avro_bytes(full, [](avro_value_t& record) {
    auto home = field(record, "home");
    set_string(field(home, "city"), "Bern");
    auto value = field(home, "country");
    avro_value_set_enum(&value, 0);
    value = field(record, "work");
    auto work = branch(value, 1);
    set_string(field(work, "city"), "Köln");
    value = field(work, "country");
    avro_value_set_enum(&value, 1);
    value = field(record, "born");
    avro_value_set_enum(&value, 1);
  });
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto failure = format->parse(confluent_framed(9, bytes));
  ASSERT_FALSE(failure) << failure->message;
  EXPECT_EQ(text_of(format->record(), 0), R"({"city":"Bern","country":"CH"})");
  EXPECT_EQ(text_of(format->record(), 1), R"({"city":"Köln","country":"DE"})");
  EXPECT_EQ(text_of(format->record(), 2), "DE");

  // A reference the registry does not have: the schema is bad; one it cannot answer for now: wait.
  auto dangling = avro_schema(10, text);
  dangling.references = {{"shop.Address", "nowhere", 1}};
  registry.add(dangling);
  EXPECT_EQ(format->parse(confluent_framed(10, bytes))->reason, "unknown_schema");
  auto again = avro_schema(11, text);
  again.references = customer.references;
  registry.add(again);
  registry.set_unavailable(true);
  EXPECT_EQ(format->parse(confluent_framed(11, bytes))->kind, DecodeFailure::Kind::unavailable);
  EXPECT_FALSE(format->parse(confluent_framed(9, bytes))) << "a cached id keeps decoding";
  registry.set_unavailable(false);
  EXPECT_FALSE(format->parse(confluent_framed(11, bytes)));
}

// A registry (or whoever may register schemas) decides what references say; a schema's cost must
// stay in proportion to what it fetched however they are made.
TEST(AvroFormat, HostileReferencesCostInProportionToTheirText) {
  FakeSchemaRegistry registry;
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const std::string root = R"({"type":"record","name":"R","fields":[{"name":"f","type":"T0"}]})";
  // Reference Ti defines a record named Di (not Ti) using T(i+1) twice: were every use of a
  // name that was never defined inlined again, 40 of them would make 2^40 copies.
  constexpr int kLevels = 40;
  for (int i = 0; i < kLevels; ++i) {
    const std::string next = i + 1 < kLevels ? "T" + std::to_string(i + 1) : "long";
    auto schema =
        avro_schema(0, R"({"type":"record","name":"D)" + std::to_string(i) + R"(","fields":[{"name":"a","type":")" +
                           next + R"("},{"name":"b","type":")" + next + R"("}]})");
    if (i + 1 < kLevels) schema.references = {{next, "t" + std::to_string(i + 1), 1}};
    registry.add_version("t" + std::to_string(i), 1, schema);
  }
  auto mismatched = avro_schema(1, root);
  mismatched.references = {{"T0", "t0", 1}};
  registry.add(mismatched);
  auto failure = format->parse(confluent_framed(1, varint(0)));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema") << failure->message;

  // Thousands of references: each is a fetch the pipeline thread waits for, and text kept until
  // the schema is built. Refused past a bound, as for Protobuf imports.
  auto many = avro_schema(2, R"({"type":"record","name":"M","fields":[{"name":"f","type":"long"}]})");
  for (int i = 0; i < 1000; ++i) {
    const auto name = "shop.E" + std::to_string(i);
    registry.add_version("e" + std::to_string(i), 1,
                         avro_schema(0, R"({"type":"enum","name":")" + name + R"(","symbols":["A"]})"));
    many.references.push_back({name, "e" + std::to_string(i), 1});
  }
  registry.add(many);
  const auto calls = registry.calls();
  failure = format->parse(confluent_framed(2, varint(0)));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("references"), std::string::npos) << failure->message;
  EXPECT_LE(registry.calls() - calls, 300) << "stops fetching at the bound";
}

// The cache's bound in bytes counts what a schema is made of, its references included: else one id
// whose references are 256 answers of megabytes each would count as its own few bytes.
TEST(AvroFormat, ReferencesCountInTheCachesBytes) {
  FakeSchemaRegistry registry;
  const std::string root = R"({"type":"record","name":"R","fields":[{"name":"f","type":"shop.E0"}]})";
  auto schema = avro_schema(1, root);
  std::size_t total = root.size();
  for (int i = 0; i < 3; ++i) {
    const auto name = "shop.E" + std::to_string(i);
    const auto text =
        R"({"type":"enum","name":")" + name + R"(","doc":")" + std::string(1000, 'x') + R"(","symbols":["A"]})";
    registry.add_version("e" + std::to_string(i), 1, avro_schema(0, text));
    schema.references.push_back({name, "e" + std::to_string(i), 1});
    total += text.size();
  }
  registry.add(schema);
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  ASSERT_FALSE(format->parse(confluent_framed(1, varint(0))));
  EXPECT_EQ(format->schema_cache_stats().cached_bytes, total);

  // One schema larger than its bound is refused, before all of it is fetched.
  const auto small = make_input_format(config::EventFormat::avro, &registry, SchemaCacheLimits{10, 1 << 20, 2000});
  const auto calls = registry.calls();
  const auto failure = small->parse(confluent_framed(1, varint(0)));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("over 2000 bytes of schema text"), std::string::npos) << failure->message;
  EXPECT_EQ(registry.calls() - calls, 3) << "the schema and two references, not the third";
}

TEST(AvroFormat, ASchemaWithCountlessReferencesIsBadAfterABoundedNumberOfFetches) {
  // Each referenced schema lists 20 more references of its own, four levels deep: far within the
  // nesting bound, that is 20^4 fetches, each a round trip to the registry while the partition waits.
  FakeSchemaRegistry registry;
  constexpr int kFanOut = 20;
  const auto references_of = [](const std::string& prefix) {
    std::vector<connectors::SchemaReference> out;
    for (int i = 0; i < kFanOut; ++i) out.push_back({prefix + "n" + std::to_string(i), prefix + std::to_string(i), 1});
    return out;
  };
  // Every subject answers with a schema whose references are new names under its own prefix.
  registry.set_subject_fallback([&](std::string_view subject, std::int32_t) {
    auto schema = avro_schema(0, R"({"type":"enum","name":"E","symbols":["A"]})");
    if (std::count(subject.begin(), subject.end(), '.') < 4)
      schema.references = references_of(std::string(subject) + ".");
    return schema;
  });
  auto root = avro_schema(5, kOrderSchema);
  root.references = references_of("r.");
  registry.add(root);
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  const auto failure = format->parse(order_message(5));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_schema");
  EXPECT_NE(failure->message.find("references"), std::string::npos) << failure->message;
  EXPECT_LE(registry.calls(), 300);
}

TEST(AvroFormat, TheSchemaCacheAnswersAsForEveryFormat) {
  FakeSchemaRegistry registry;
  registry.add(avro_schema(1, kOrderSchema));
  registry.add(avro_schema(2, kOrderSchema));
  registry.add({3, connectors::SchemaType::protobuf, "syntax = \"proto3\";", {}});
  const auto format = make_input_format(config::EventFormat::avro, &registry);
  auto failure = format->parse(order_message(99));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "unknown_schema");
  EXPECT_EQ(failure->schema_id, 99);
  EXPECT_EQ(format->parse(order_message(3))->reason, "wrong_schema_type");
  EXPECT_EQ(format->parse(R"({"event_id":"x"})")->reason, "not_confluent_framed");
  ASSERT_FALSE(format->parse(order_message(1)));
  registry.set_unavailable(true);
  EXPECT_FALSE(format->parse(order_message(1))) << "a cached id keeps decoding";
  failure = format->parse(order_message(2));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  EXPECT_EQ(failure->reason, "schema_registry_unavailable");
  registry.set_unavailable(false);
  EXPECT_FALSE(format->parse(order_message(2)));
  EXPECT_EQ(format->schema_cache_stats().cached_schemas, 4u);  // 99 (unknown), 3 (wrong type), 1, 2
}

}  // namespace
}  // namespace hbingest::event_formats
