// decode.format: json_schema over a fake registry: the frame, the schema cache's answers (unknown
// id, registry down, cached ids while it is down) and the fields as JSON reads them.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fake_schema_registry.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/event_formats/format_factory.h"

namespace hbingest::event_formats {
namespace {

using testing::confluent_framed;
using testing::FakeSchemaRegistry;

constexpr const char* kEvent = R"({"event_id":"login","ts":1700000000123,"user":"u1"})";

connectors::RegisteredSchema json_schema(std::int32_t id) {
  return {id, connectors::SchemaType::json, R"({"type":"object","properties":{"event_id":{"type":"string"}}})", {}};
}

TEST(JsonSchemaFormat, ReadsTheFramedObjectAsJsonDoes) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(3));
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  ASSERT_FALSE(format->parse(confluent_framed(3, kEvent)));
  const auto& record = format->record();
  ASSERT_EQ(record.member_count(), 3u);
  std::string text;
  record.append_text(2, text);
  EXPECT_EQ(text, "u1");
  ASSERT_FALSE(format->parse(confluent_framed(3, kEvent)));
  EXPECT_EQ(registry.calls(), 1) << "a schema is fetched once";
}

TEST(JsonSchemaFormat, UnknownIdsAndUnframedJsonAreInvalid) {
  FakeSchemaRegistry registry;
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  auto failure = format->parse(confluent_framed(99, kEvent));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid);
  EXPECT_EQ(failure->reason, "unknown_schema");
  EXPECT_EQ(failure->schema_id, 99);
  failure = format->parse(kEvent);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "not_confluent_framed");
}

TEST(JsonSchemaFormat, ASchemaOfAnotherTypeIsInvalid) {
  FakeSchemaRegistry registry;
  registry.add({5, connectors::SchemaType::avro, R"({"type":"record","name":"x","fields":[]})", {}});
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  const auto failure = format->parse(confluent_framed(5, kEvent));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "wrong_schema_type");
  EXPECT_NE(failure->message.find("AVRO"), std::string::npos) << failure->message;
}

TEST(JsonSchemaFormat, ARegistryDownIsUnavailableForNewIdsOnlyAndNotRemembered) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(1));
  registry.add(json_schema(2));
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  ASSERT_FALSE(format->parse(confluent_framed(1, kEvent)));
  registry.set_unavailable(true);
  EXPECT_FALSE(format->parse(confluent_framed(1, kEvent))) << "a cached id keeps decoding";
  auto failure = format->parse(confluent_framed(2, kEvent));
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  EXPECT_EQ(failure->reason, "schema_registry_unavailable");
  EXPECT_EQ(failure->schema_id, 2);
  EXPECT_EQ(format->schema_cache_stats().fetch_failures, 1u);
  registry.set_unavailable(false);
  EXPECT_FALSE(format->parse(confluent_framed(2, kEvent))) << "asked again once the registry is back";
}

// A registry that takes its time (black-holed: a whole timeout per request) must not stop the
// thread that decodes: the answer is awaited only a moment, and taken when it comes.
TEST(JsonSchemaFormat, ARegistryThatDoesNotAnswerStopsTheDecoderOnlyAMoment) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(1));
  registry.add(json_schema(2));
  registry.block_id(2);
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  const auto started = std::chrono::steady_clock::now();
  auto failure = format->parse(confluent_framed(2, kEvent));
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
  EXPECT_NE(failure->message.find("has not answered yet"), std::string::npos) << failure->message;
  EXPECT_LT(waited, std::chrono::seconds(5)) << "the decoder waited for the registry";
  failure = format->parse(confluent_framed(2, kEvent));
  ASSERT_TRUE(failure) << "still not answered";
  EXPECT_EQ(registry.calls(), 1) << "asked once, not once per message";
  registry.release_id(2);
  for (int i = 0; i < 100 && format->parse(confluent_framed(2, kEvent)); ++i) {
  }
  EXPECT_FALSE(format->parse(confluent_framed(2, kEvent))) << "the late answer is taken";
  EXPECT_FALSE(format->parse(confluent_framed(1, kEvent)));
  EXPECT_EQ(format->schema_cache_stats().cached_schemas, 2u);
}

// A registry that times out, asked for every uncached id of every held partition and new message in
// turn, would keep the pipeline thread from polling, committing and the watchdog for a timeout per
// id. One id is asked at a time, on the cache's thread; the others are answered at once meanwhile.
TEST(JsonSchemaFormat, ARegistryThatTimesOutIsAskedOneIdAtATime) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(1));
  const auto format = make_input_format(config::EventFormat::json_schema, &registry);
  ASSERT_FALSE(format->parse(confluent_framed(1, kEvent)));
  registry.set_unavailable(true);
  registry.set_failure_delay(std::chrono::milliseconds(3000));
  const auto started = std::chrono::steady_clock::now();
  for (std::int32_t id = 2; id < 10; ++id) {
    const auto failure = format->parse(confluent_framed(id, kEvent));
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->kind, DecodeFailure::Kind::unavailable);
    EXPECT_NE(failure->message.find("schema id " + std::to_string(id)), std::string::npos) << failure->message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(3)) << "waited for the registry";
  EXPECT_EQ(registry.calls(), 2) << "schema 1, then schema 2 alone while it is being asked for";
  EXPECT_FALSE(format->parse(confluent_framed(1, kEvent))) << "a cached id keeps decoding";
}

TEST(JsonSchemaFormat, AFormatGoneWhileItsRegistryIsAskedWaitsForTheAnswer) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(2));
  registry.block_id(2);
  std::thread release;
  {
    const auto format = make_input_format(config::EventFormat::json_schema, &registry);
    ASSERT_TRUE(format->parse(confluent_framed(2, kEvent)));
    release = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      registry.release_id(2);
    });
  }  // the registry thread is joined here, with the request in flight: no use of a dead cache
  release.join();
  EXPECT_EQ(registry.calls(), 1);
}

TEST(JsonSchemaFormat, TheCacheIsBoundedInCount) {
  FakeSchemaRegistry registry;
  for (int id = 1; id <= 5; ++id) registry.add(json_schema(id));
  const auto format =
      make_input_format(config::EventFormat::json_schema, &registry, SchemaCacheLimits{.max_schemas = 2});
  for (int id = 1; id <= 5; ++id) ASSERT_FALSE(format->parse(confluent_framed(id, kEvent)));
  EXPECT_EQ(format->schema_cache_stats().cached_schemas, 2u);
  ASSERT_FALSE(format->parse(confluent_framed(5, kEvent)));
  EXPECT_EQ(registry.calls(), 5) << "the most recent stays";
  ASSERT_FALSE(format->parse(confluent_framed(1, kEvent)));
  EXPECT_EQ(registry.calls(), 6) << "the least recent went";
}

TEST(EventDecoderFormats, TopicFormatsChooseTheFormatPerTopic) {
  FakeSchemaRegistry registry;
  registry.add(json_schema(3));
  config::DecodeConfig config;
  config.topic_formats = {{"framed", "json_schema"}};
  EventDecoder decoder(config, &registry);
  DecodedEvent event;
  const std::string framed = confluent_framed(3, kEvent);
  const std::string plain = kEvent;
  EXPECT_FALSE(decoder.decode({"framed", framed, -1}, event));
  EXPECT_FALSE(decoder.decode({"plain", plain, -1}, event));
  EXPECT_EQ(decoder.decode({"plain", framed, -1}, event)->reason, "invalid_json");
  EXPECT_EQ(decoder.decode({"framed", plain, -1}, event)->reason, "not_confluent_framed");
}

TEST(EventDecoderFormats, AFormatThatNeedsARegistryRefusesToBeMadeWithoutOne) {
  config::DecodeConfig config;
  config.format = config::EventFormat::json_schema;
  EXPECT_THROW(EventDecoder decoder(config), std::invalid_argument);
}

}  // namespace
}  // namespace hbingest::event_formats
