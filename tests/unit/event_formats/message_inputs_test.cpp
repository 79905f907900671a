// The input grammar (input_name.h) and the decoder's view of a whole Kafka message: value paths,
// the key in each key format, headers, metadata, and tombstones (decode_key_only).

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fake_schema_registry.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/event_formats/input_name.h"

namespace hbingest::event_formats {
namespace {

using keyspec::FieldValue;
using testing::confluent_framed;
using testing::FakeSchemaRegistry;

// --- the grammar ----------------------------------------------------------------------------------

TEST(InputName, EachSourceAndItsParts) {
  auto value = parse_input_name("payment.amount");
  EXPECT_EQ(value.source, InputSource::value);
  EXPECT_EQ(value.path.steps.size(), 2u);
  EXPECT_TRUE(value.reads_value());

  auto explicit_value = parse_input_name("value.key");
  EXPECT_EQ(explicit_value.source, InputSource::value);
  EXPECT_EQ(explicit_value.path.text, "key");

  auto bare_value = parse_input_name("value");
  EXPECT_EQ(bare_value.source, InputSource::value) << "the value field named value";
  EXPECT_EQ(bare_value.path.steps.front().name, "value");

  auto key = parse_input_name("key");
  EXPECT_EQ(key.source, InputSource::key);
  EXPECT_TRUE(key.path.steps.empty());
  EXPECT_TRUE(key.reads_decoded_key());
  EXPECT_FALSE(key.reads_value());

  auto key_path = parse_input_name("key.ids[2].order_id");
  EXPECT_EQ(key_path.source, InputSource::key);
  EXPECT_EQ(key_path.path.steps.size(), 3u);
  EXPECT_EQ(key_path.path.steps[1].index, 2u);

  auto header = parse_input_name("header:trace-id.v1:x");
  EXPECT_EQ(header.source, InputSource::header);
  EXPECT_EQ(header.header, "trace-id.v1:x") << "a header name is taken as it is";

  for (const auto& [text, which] :
       std::vector<std::pair<std::string, KafkaInput>>{{"kafka:topic", KafkaInput::topic},
                                                       {"kafka:partition", KafkaInput::partition},
                                                       {"kafka:offset", KafkaInput::offset},
                                                       {"kafka:timestamp", KafkaInput::timestamp},
                                                       {"kafka:key", KafkaInput::key},
                                                       {"kafka:value", KafkaInput::value}}) {
    const auto input = parse_input_name(text);
    EXPECT_EQ(input.source, InputSource::kafka) << text;
    EXPECT_EQ(input.kafka, which) << text;
    EXPECT_EQ(input.reads_value(), which == KafkaInput::value) << text;
    EXPECT_FALSE(input.reads_decoded_key()) << text << ": the raw key needs no key format";
  }
  EXPECT_EQ(parse_input_name("a.b:c").source, InputSource::value) << "':' after the first step is part of a name";
}

TEST(InputName, MistakesAreRefusedWithWhatWasExpected) {
  const auto refused = [](const std::string& text) {
    try {
      parse_input_name(text);
    } catch (const FieldPathError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("header:").find("header name"), std::string::npos);
  EXPECT_NE(refused("kafka:headers").find("kafka:topic"), std::string::npos);
  EXPECT_NE(refused("headers:trace").find("unknown prefix 'headers:'"), std::string::npos);
  EXPECT_NE(refused("key[0]").find("key.<field>"), std::string::npos);
  EXPECT_NE(refused("key.").find("expected a field name"), std::string::npos);
  EXPECT_NE(refused("value.").find("expected a field name"), std::string::npos);
  EXPECT_NE(refused("").find("empty"), std::string::npos);
  EXPECT_NE(refused(std::string(5000, 'a')).find("longer than"), std::string::npos);
  std::string deep = "key";
  for (int i = 0; i < 10000; ++i) deep += ".a";
  EXPECT_NE(refused(deep), "accepted") << "a path 10,000 levels deep";
}

// --- the decoder's view of a message --------------------------------------------------------------

constexpr const char* kOrder = R"({"event_id":"order","ts":1700000000123,"user":"u1","key":"in-value",)"
                               R"("value":7,"payment":{"amount":12.5}})";

struct Message {
  std::string topic = "orders";
  std::optional<std::string> payload = std::string(kOrder);
  std::optional<std::string> key = std::string("k-1");
  std::int64_t timestamp_ms = 1700000000999;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  std::vector<HeaderView> header_views;

  MessageView view() {
    header_views.clear();
    for (const auto& [name, value] : headers) {
      header_views.push_back({name, value ? std::optional<std::string_view>(*value) : std::nullopt});
    }
    MessageView out;
    out.topic = topic;
    if (payload) out.payload = *payload;
    out.timestamp_ms = timestamp_ms;
    out.partition = 3;
    out.offset = 42;
    if (key) out.key = *key;
    out.headers = header_views;
    return out;
  }
};

std::optional<std::string> text(const MessageFields& fields, const std::string& name) {
  std::string out = "<";
  if (!fields.append_text(parse_input_name(name), out)) return std::nullopt;
  return out.substr(1);
}

std::optional<std::string> string_field(const MessageFields& fields, const std::string& name) {
  const auto value = fields.field(name);
  if (!value) return std::nullopt;
  if (const auto* s = std::get_if<std::string_view>(&*value)) return std::string(*s);
  return "<not a string>";
}

TEST(MessageInputs, KeyHeadersAndMetadataBesideTheValue) {
  EventDecoder decoder({});
  DecodedEvent event;
  Message m;
  m.headers = {{"trace", "a"}, {"nul", std::nullopt}, {"trace", "b"}, {"empty", ""}};
  ASSERT_FALSE(decoder.decode(m.view(), event));
  const auto& fields = decoder.fields();
  EXPECT_EQ(string_field(fields, "user"), "u1");
  EXPECT_EQ(string_field(fields, "value.user"), "u1");
  EXPECT_EQ(string_field(fields, "key"), "k-1") << "the Kafka key (text), not the value's field";
  EXPECT_EQ(string_field(fields, "value.key"), "in-value");
  EXPECT_EQ(fields.field("value"), FieldValue{std::int64_t{7}});
  EXPECT_EQ(string_field(fields, "kafka:key"), "k-1");
  EXPECT_EQ(string_field(fields, "kafka:value"), kOrder);
  EXPECT_EQ(string_field(fields, "kafka:topic"), "orders");
  EXPECT_EQ(fields.field("kafka:partition"), FieldValue{std::int64_t{3}});
  EXPECT_EQ(fields.field("kafka:offset"), FieldValue{std::int64_t{42}});
  EXPECT_EQ(fields.field("kafka:timestamp"), FieldValue{std::int64_t{1700000000999}});
  EXPECT_EQ(string_field(fields, "header:trace"), "b") << "the last of a repeated name";
  EXPECT_EQ(fields.field("header:nul"), FieldValue{}) << "a header without a value reads as null";
  EXPECT_EQ(string_field(fields, "header:empty"), "");
  EXPECT_EQ(fields.field("header:none"), std::nullopt);
  EXPECT_EQ(fields.field("value.none"), std::nullopt);
  EXPECT_EQ(fields.field("key.order_id"), std::nullopt) << "a text key has no fields";
  EXPECT_EQ(fields.field("header:"), std::nullopt) << "a name that does not parse is absent";
  EXPECT_EQ(fields.field("a]"), std::nullopt);

  EXPECT_EQ(text(fields, "kafka:partition"), "3");
  EXPECT_EQ(text(fields, "kafka:offset"), "42");
  EXPECT_EQ(text(fields, "kafka:timestamp"), "1700000000999");
  EXPECT_EQ(text(fields, "header:trace"), "b");
  EXPECT_EQ(text(fields, "header:nul"), "") << "null: present, no text";
  EXPECT_EQ(text(fields, "header:none"), std::nullopt);
  EXPECT_EQ(text(fields, "key"), "k-1");
  EXPECT_EQ(text(fields, "value"), "7");
  EXPECT_EQ(text(fields, "key.x"), std::nullopt);
}

TEST(MessageInputs, NullKeyEmptyKeyAndBinaryKey) {
  for (const auto format : {config::KeyFormat::text, config::KeyFormat::bytes}) {
    config::DecodeConfig config;
    config.key_format = format;
    EventDecoder decoder(config);
    DecodedEvent event;
    Message m;
    m.key.reset();
    ASSERT_FALSE(decoder.decode(m.view(), event));
    EXPECT_EQ(decoder.fields().field("key"), FieldValue{}) << "a null key reads as null";
    EXPECT_EQ(decoder.fields().field("kafka:key"), FieldValue{});
    EXPECT_EQ(text(decoder.fields(), "key"), "");
    m.key = "";
    ASSERT_FALSE(decoder.decode(m.view(), event));
    EXPECT_EQ(string_field(decoder.fields(), "key"), "") << "an empty key is not a null one";
    m.key = std::string("\0\xff\x01k", 4);
    ASSERT_FALSE(decoder.decode(m.view(), event));
    EXPECT_EQ(string_field(decoder.fields(), "key"), *m.key) << "bytes as they are";
    EXPECT_EQ(decoder.key_format_of("orders"), format);
  }
}

TEST(MessageInputs, TheKafkaTimestampStandsInForAMissingTimeUnderEveryName) {
  EventDecoder decoder({});
  DecodedEvent event;
  Message m;
  m.payload = R"({"event_id":"x"})";
  ASSERT_FALSE(decoder.decode(m.view(), event));
  EXPECT_EQ(decoder.fields().field("ts"), FieldValue{std::int64_t{1700000000999}});
  EXPECT_EQ(decoder.fields().field("value.ts"), FieldValue{std::int64_t{1700000000999}});
}

// --- key formats ----------------------------------------------------------------------------------

constexpr const char* kKeyAvro =
    R"({"type":"record","name":"Key","fields":[{"name":"order_id","type":"string"},{"name":"n","type":"long"}]})";
constexpr const char* kKeyProto = R"(syntax = "proto3"; message Key { string order_id = 1; int64 n = 2; })";
constexpr const char* kKeyJsonSchema =
    R"({"type":"object","properties":{"order_id":{"type":"string"},"n":{"type":"integer"}}})";

// {order_id: "o-1", n: 5} in Avro binary (zigzag lengths and longs) and Protobuf.
const std::string kAvroKey = std::string("\x06o-1", 4) + "\x0a";
const std::string kProtoKey = std::string("\x0a\x03o-1\x10\x05", 7);

struct KeyCase {
  std::string format;
  std::string key;
};

class KeyFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.add({7, connectors::SchemaType::avro, kKeyAvro, {}});
    registry_.add({9, connectors::SchemaType::protobuf, kKeyProto, {}});
    registry_.add({11, connectors::SchemaType::json, kKeyJsonSchema, {}});
  }
  EventDecoder decoder(const std::string& format, bool reads_key) {
    config::DecodeConfig config;
    config.topic_key_formats = {{"orders", format}};
    return EventDecoder(config, &registry_, {}, {.reads_key = reads_key});
  }
  FakeSchemaRegistry registry_;
};

TEST_F(KeyFormats, EachStructuredFormatGivesTheKeysFields) {
  const std::vector<KeyCase> cases = {
      {"json", R"({"order_id":"o-1","n":5})"},
      {"avro", confluent_framed(7, kAvroKey)},
      {"protobuf", confluent_framed(9, std::string(1, '\0') + kProtoKey)},
      {"json_schema", confluent_framed(11, R"({"order_id":"o-1","n":5})")},
  };
  for (const auto& c : cases) {
    for (const bool reads_key : {false, true}) {
      SCOPED_TRACE(c.format + (reads_key ? " decoded with the value" : " decoded on the first read"));
      auto d = decoder(c.format, reads_key);
      DecodedEvent event;
      Message m;
      m.key = c.key;
      ASSERT_FALSE(d.decode(m.view(), event));
      const auto& fields = d.fields();
      EXPECT_EQ(string_field(fields, "key.order_id"), "o-1");
      EXPECT_EQ(fields.field("key.n"), FieldValue{std::int64_t{5}});
      EXPECT_EQ(fields.field("key.none"), std::nullopt);
      EXPECT_EQ(fields.field("key"), FieldValue{keyspec::NestedValue{}});
      EXPECT_EQ(string_field(fields, "kafka:key"), c.key) << "the raw bytes whatever the format";
      EXPECT_EQ(text(fields, "key"), R"({"order_id":"o-1","n":5})");
      EXPECT_EQ(text(fields, "key.n"), "5");
      EXPECT_EQ(string_field(fields, "user"), "u1") << "the value's record stays beside the key's";
      // A key given twice reads the same (the format's buffers are reused between messages).
      ASSERT_FALSE(d.decode(m.view(), event));
      EXPECT_EQ(string_field(d.fields(), "key.order_id"), "o-1");
      EXPECT_EQ(d.key_format_of("orders"), config::key_format_named(c.format));
      EXPECT_EQ(d.key_format_of("other"), config::KeyFormat::text);
    }
  }
}

TEST_F(KeyFormats, AJsonKeyMayBeAScalar) {
  auto d = decoder("json", true);
  DecodedEvent event;
  Message m;
  const std::vector<std::tuple<std::string, FieldValue, std::string>> cases = {
      {R"("o-\"1")", FieldValue{std::string_view("o-\"1")}, "o-\"1"},
      {"123", FieldValue{std::int64_t{123}}, "123"},
      {"2.0", FieldValue{2.0}, "2.0"},
      {"true", FieldValue{true}, "true"},
      {"null", FieldValue{}, ""},
  };
  for (const auto& [key, value, cell] : cases) {
    m.key = key;
    ASSERT_FALSE(d.decode(m.view(), event)) << key;
    EXPECT_EQ(d.fields().field("key"), value) << key;
    EXPECT_EQ(text(d.fields(), "key"), cell) << key;
    EXPECT_EQ(d.fields().field("key.a"), std::nullopt) << key;
  }
  m.key = "o-1";  // not JSON
  EXPECT_EQ(d.decode(m.view(), event)->reason, "invalid_key");
}

TEST_F(KeyFormats, AKeyThatDoesNotDecodeIsInvalidOnlyWhenARouteReadsIt) {
  const std::vector<KeyCase> garbage = {
      {"json", "{\"order_id\":"},
      {"avro", confluent_framed(7, "\x06o")},                           // truncated string
      {"avro", confluent_framed(7, std::string(64, '\xff'))},           // varints that never end
      {"avro", std::string("\xde\xad\xbe\xef garbage")},                // no frame at all
      {"protobuf", confluent_framed(9, std::string("\0\x0a\x7f", 3))},  // length past the end
      {"json_schema", confluent_framed(11, "[1,")},
  };
  for (const auto& c : garbage) {
    SCOPED_TRACE(c.format);
    Message m;
    m.key = c.key;
    DecodedEvent event;
    auto lenient = decoder(c.format, false);
    ASSERT_FALSE(lenient.decode(m.view(), event)) << "no route reads the key: the event stands";
    EXPECT_EQ(lenient.fields().field("key.order_id"), std::nullopt);
    EXPECT_EQ(text(lenient.fields(), "key"), std::nullopt);
    EXPECT_EQ(string_field(lenient.fields(), "user"), "u1");

    auto strict = decoder(c.format, true);
    const auto failure = strict.decode(m.view(), event);
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid);
    EXPECT_EQ(failure->reason, "invalid_key");
    EXPECT_TRUE(failure->message.starts_with("Kafka key: ")) << failure->message;
  }
}

TEST_F(KeyFormats, TheFailureNamesTheKeysSchemaId) {
  auto d = decoder("avro", true);
  Message m;
  m.key = confluent_framed(7, std::string(64, '\xff'));
  DecodedEvent event;
  const auto failure = d.decode(m.view(), event);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->schema_id, 7);
  m.key = confluent_framed(404, kAvroKey);
  EXPECT_EQ(d.decode(m.view(), event)->reason, "invalid_key") << "an id the registry does not know";
}

TEST_F(KeyFormats, AKeySchemaTheRegistryCannotGiveNowIsUnavailable) {
  registry_.set_unavailable_id(7, true);
  auto d = decoder("avro", true);
  Message m;
  m.key = confluent_framed(7, kAvroKey);
  DecodedEvent event;
  const auto failure = d.decode(m.view(), event);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  EXPECT_NE(failure->reason, "invalid_key");
  registry_.set_unavailable_id(7, false);
  EXPECT_FALSE(d.decode(m.view(), event)) << "decoded once the registry answers";
}

TEST_F(KeyFormats, ANullKeyIsNoFailure) {
  auto d = decoder("avro", true);
  Message m;
  m.key.reset();
  DecodedEvent event;
  ASSERT_FALSE(d.decode(m.view(), event));
  EXPECT_EQ(d.fields().field("key"), FieldValue{});
  EXPECT_EQ(d.fields().field("key.order_id"), std::nullopt);
}

// --- tombstones -----------------------------------------------------------------------------------

TEST_F(KeyFormats, ATombstoneIsInvalidToDecodeAndReadableByItsKey) {
  auto d = decoder("avro", true);
  Message m;
  m.payload.reset();
  m.key = confluent_framed(7, kAvroKey);
  m.headers = {{"op", "delete"}};
  DecodedEvent event;
  event.event_type = "left over";
  const auto failure = d.decode(m.view(), event);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid);
  EXPECT_EQ(failure->reason, "tombstone");

  ASSERT_FALSE(d.decode_key_only(m.view(), event));
  EXPECT_EQ(event.event_type, "");
  EXPECT_EQ(event.time_ms, 1700000000999) << "the Kafka timestamp";
  EXPECT_EQ(d.record(), nullptr) << "a tombstone has no value record";
  const auto& fields = d.fields();
  EXPECT_EQ(string_field(fields, "key.order_id"), "o-1");
  EXPECT_EQ(string_field(fields, "header:op"), "delete");
  EXPECT_EQ(fields.field("kafka:offset"), FieldValue{std::int64_t{42}});
  EXPECT_EQ(fields.field("kafka:value"), FieldValue{}) << "a null value";
  EXPECT_EQ(text(fields, "kafka:value"), "");
  EXPECT_EQ(fields.field("user"), std::nullopt) << "no value paths";
  EXPECT_EQ(fields.field("value.user"), std::nullopt);
  EXPECT_EQ(fields.field("ts"), std::nullopt);

  m.timestamp_ms = -1;
  const auto no_time = d.decode_key_only(m.view(), event);
  ASSERT_TRUE(no_time);
  EXPECT_EQ(no_time->reason, "missing_time");

  m.timestamp_ms = 1;
  m.key = confluent_framed(7, "\x06o");
  EXPECT_EQ(d.decode_key_only(m.view(), event)->reason, "invalid_key");
}

TEST(MessageInputs, AnEmptyValueIsNotATombstone) {
  EventDecoder decoder({});
  DecodedEvent event;
  Message m;
  m.payload = "";
  EXPECT_EQ(decoder.decode(m.view(), event)->reason, "invalid_json");
}

// --- hostile messages -----------------------------------------------------------------------------

TEST(MessageInputs, AHeaderOfOneMebibyteReadsWholeWithinMaxEventBytes) {
  config::DecodeConfig config;
  config.max_event_bytes = 2 << 20;
  EventDecoder decoder(config);
  DecodedEvent event;
  Message m;
  m.headers = {{"big", std::string(1 << 20, 'h')}};
  ASSERT_FALSE(decoder.decode(m.view(), event));
  EXPECT_EQ(string_field(decoder.fields(), "header:big")->size(), std::size_t{1} << 20);
  EXPECT_EQ(text(decoder.fields(), "header:big")->size(), std::size_t{1} << 20);
}

// max_event_bytes bounds the whole message: a small value with a huge header or key is as large
// as a huge value (each may become a cell), a tombstone's key too.
TEST(MessageInputs, MaxEventBytesCountsTheKeyAndHeadersToo) {
  config::DecodeConfig config;
  config.max_event_bytes = 64 * 1024;
  EventDecoder decoder(config);
  DecodedEvent event;
  Message header;
  header.headers = {{"big", std::string(1 << 20, 'h')}};
  const auto by_header = decoder.decode(header.view(), event);
  ASSERT_TRUE(by_header);
  EXPECT_EQ(by_header->reason, "too_large");
  EXPECT_NE(by_header->message.find("value, key and headers"), std::string::npos) << by_header->message;
  Message key;
  key.key = std::string(1 << 20, 'k');
  EXPECT_EQ(decoder.decode(key.view(), event)->reason, "too_large");
  key.payload.reset();
  EXPECT_EQ(decoder.decode_key_only(key.view(), event)->reason, "too_large");
}

TEST(MessageInputs, TenThousandHeadersAndMoreNamesThanTheCacheKeeps) {
  EventDecoder decoder({});
  DecodedEvent event;
  Message m;
  for (int i = 0; i < 10000; ++i) m.headers.emplace_back("h" + std::to_string(i % 5000), std::to_string(i));
  ASSERT_FALSE(decoder.decode(m.view(), event));
  // More distinct names than the cache keeps: the ones past it are parsed on each read, same answers.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(string_field(decoder.fields(), "header:h" + std::to_string(i)), std::to_string(i + 5000)) << i;
    }
  }
  EXPECT_EQ(decoder.fields().field("header:h5000"), std::nullopt);
}

}  // namespace
}  // namespace hbingest::event_formats
