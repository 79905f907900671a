#include "hbingest/ingest/event_decoder.h"

#include <gtest/gtest.h>

namespace hbingest::ingest {
namespace {

connectors::SourceMessage message(std::string payload, std::int64_t kafka_ts = -1) {
  connectors::SourceMessage m;
  m.topic = "events";
  m.payload = std::move(payload);
  m.timestamp_ms = kafka_ts;
  return m;
}

std::map<std::string, std::string> cells_of(const DecodedEvent& event) {
  std::map<std::string, std::string> out;
  for (const auto& cell : event.cells) out[cell.family + ":" + cell.qualifier] = cell.value;
  return out;
}

TEST(EventDecoder, FieldsBecomeTextCellsNestedValuesCompactJson) {
  EventDecoder decoder({});
  DecodedEvent event;
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"order","ts":1700000000123,"amount":410.0,"price":12.5,
      "qty":3,"ok":true,"none":null,"items":[{"sku":"a", "qty":2}],"meta":{"a" : 1}})"), event));
  EXPECT_EQ(event.event_type, "order");
  EXPECT_EQ(event.time_ms, 1700000000123);
  const auto cells = cells_of(event);
  EXPECT_EQ(cells.at("d:amount"), "410.0");
  EXPECT_EQ(cells.at("d:price"), "12.5");
  EXPECT_EQ(cells.at("d:qty"), "3");
  EXPECT_EQ(cells.at("d:ok"), "true");
  EXPECT_EQ(cells.at("d:items"), R"([{"sku":"a","qty":2}])");
  EXPECT_EQ(cells.at("d:meta"), R"({"a":1})");
  EXPECT_FALSE(cells.contains("d:none")) << "a null field writes no cell by default";
}

TEST(EventDecoder, NullFieldsWriteEmptyCellsWhenConfigured) {
  config::DecodeConfig config;
  config.write_null_fields = true;
  EventDecoder decoder(config);
  DecodedEvent event;
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"x","ts":1,"none":null})"), event));
  EXPECT_EQ(cells_of(event).at("d:none"), "");
}

TEST(EventDecoder, RawAndBothModes) {
  config::DecodeConfig config;
  config.columns = config::ColumnsMode::raw;
  EventDecoder raw(config);
  DecodedEvent event;
  const std::string payload = R"({"event_id":"x","ts":1,"a":"b"})";
  ASSERT_FALSE(raw.decode(message(payload), event));
  EXPECT_EQ(cells_of(event), (std::map<std::string, std::string>{{"d:raw", payload}}));
  config.columns = config::ColumnsMode::both;
  EventDecoder both(config);
  ASSERT_FALSE(both.decode(message(payload), event));
  EXPECT_EQ(cells_of(event).size(), 4u);
}

TEST(EventDecoder, TimeFormats) {
  EventDecoder decoder({});
  DecodedEvent event;
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"x","ts":1700000000})"), event));
  EXPECT_EQ(event.time_ms, 1700000000000) << "auto: small numbers are epoch seconds";
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"x","ts":"2023-11-14T22:13:20.5+01:00"})"), event));
  EXPECT_EQ(event.time_ms, 1699996400500);
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"x"})", 42), event));
  EXPECT_EQ(event.time_ms, 42) << "Kafka timestamp fallback";
  const auto ts = decoder.fields().field("ts");
  ASSERT_TRUE(ts) << "the key spec sees the fallback time as the time field";
  EXPECT_EQ(std::get<std::int64_t>(*ts), 42);
  ASSERT_FALSE(decoder.decode(message(R"({"event_id":"x","ts":7})", 42), event));
  EXPECT_EQ(std::get<std::int64_t>(*decoder.fields().field("ts")), 7) << "no fallback left over";
}

TEST(EventDecoder, InvalidEventsNameTheReason) {
  config::DecodeConfig config;
  config.kafka_time_fallback = false;
  config.max_event_bytes = 64;
  config.ttl_field = "ttl";
  EventDecoder decoder(config);
  DecodedEvent event;
  const auto reason = [&](const std::string& payload) {
    auto invalid = decoder.decode(message(payload), event);
    return invalid ? invalid->reason : std::string("valid");
  };
  EXPECT_EQ(reason("{nope"), "invalid_json");
  EXPECT_EQ(reason("[1,2]"), "not_an_object");
  EXPECT_EQ(reason(R"({"ts":1})"), "missing_type");
  EXPECT_EQ(reason(R"({"event_id":7,"ts":1})"), "bad_type");
  EXPECT_EQ(reason(R"({"event_id":"x"})"), "missing_time");
  EXPECT_EQ(reason(R"({"event_id":"x","ts":"yesterday"})"), "bad_time");
  EXPECT_EQ(reason(R"({"event_id":"x","ts":1,"ttl":-5})"), "bad_ttl");
  EXPECT_EQ(reason(std::string(100, ' ')), "too_large");
  const auto invalid = decoder.decode(message(R"({"event_id":"x"})"), event);
  ASSERT_TRUE(invalid);
  EXPECT_NE(invalid->message.find("'ts'"), std::string::npos) << invalid->message;
}

}  // namespace
}  // namespace hbingest::ingest
