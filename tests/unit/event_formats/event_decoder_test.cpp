#include "hbingest/event_formats/event_decoder.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "default_cells.h"
#include "hbingest/event_formats/json_event.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {
namespace {

// Views the payload: the test's strings outlive each decode().
MessageView message(const std::string& payload, std::int64_t kafka_ts = -1) { return {"events", payload, kafka_ts}; }

// What the default row mapping writes of the event `decoder` just decoded from `payload`.
std::map<std::string, std::string> cells_of(const EventDecoder& decoder, const config::DecodeConfig& config,
                                            std::string_view payload) {
  std::map<std::string, std::string> out;
  for (const auto& cell : testing::default_cells(decoder, config, payload)) {
    out[cell.family + ":" + cell.qualifier] = cell.value;
  }
  return out;
}

TEST(EventDecoder, FieldsBecomeTextCellsNestedValuesCompactJson) {
  EventDecoder decoder({});
  DecodedEvent event;
  const std::string payload = R"({"event_id":"order","ts":1700000000123,"amount":410.0,"price":12.5,
      "qty":3,"ok":true,"none":null,"items":[{"sku":"a", "qty":2}],"meta":{"a" : 1}})";
  ASSERT_FALSE(decoder.decode(message(payload), event));
  EXPECT_EQ(event.event_type, "order");
  EXPECT_EQ(event.time_ms, 1700000000123);
  const auto cells = cells_of(decoder, {}, payload);
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
  const std::string payload = R"({"event_id":"x","ts":1,"none":null})";
  ASSERT_FALSE(decoder.decode(message(payload), event));
  EXPECT_EQ(cells_of(decoder, config, payload).at("d:none"), "");
}

TEST(EventDecoder, RawAndBothModes) {
  config::DecodeConfig config;
  config.columns = config::ColumnsMode::raw;
  EventDecoder raw(config);
  DecodedEvent event;
  const std::string payload = R"({"event_id":"x","ts":1,"a":"b"})";
  ASSERT_FALSE(raw.decode(message(payload), event));
  EXPECT_EQ(cells_of(raw, config, payload), (std::map<std::string, std::string>{{"d:raw", payload}}));
  config.columns = config::ColumnsMode::both;
  EventDecoder both(config);
  ASSERT_FALSE(both.decode(message(payload), event));
  EXPECT_EQ(cells_of(both, config, payload).size(), 4u);
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

// fields() gives the type and time fields from what decode() read of them: whatever the events
// before, every field reads as the JSON of this event reads it, on success and after a failure.
TEST(EventDecoder, FieldsAreThisEventsAfterAnyEventBefore) {
  EventDecoder decoder({});
  DecodedEvent event;
  JsonEvent reference;
  const std::vector<std::string> payloads = {
      R"({"event_id":"a","ts":1700000000000,"x":1})",
      R"({"event_id":"b","ts":"not a time"})",                  // fails at the time: type read, time not
      R"({"event_id":7,"ts":1700000000001})",                   // fails at the type
      R"({"event_id":"c","event_id":"d","ts":1,"ts":2})",       // a repeated name: the last one
      R"({"ts":1700000000002})",                                // no type
      R"({"event_id":"e","ts":null})",                          // no time, no fallback timestamp
      R"({"event_id":"f","ts":1700000000003,"event_id":"g"})",  // the type given again after the time
  };
  for (const auto& payload : payloads) {
    SCOPED_TRACE(payload);
    (void)decoder.decode(message(payload), event);
    ASSERT_FALSE(reference.parse(payload));
    for (const char* name : {"event_id", "ts", "x"}) {
      EXPECT_EQ(decoder.fields().field(name), reference.field(name)) << name;
    }
  }
}

TEST(EventDecoder, InvalidEventsNameTheReason) {
  // Designated initialisers: GCC 12 at -O2 warns (wrongly) that a field-by-field set optional is
  // used uninitialised when the struct is copied.
  EventDecoder decoder(config::DecodeConfig{.kafka_time_fallback = false, .max_event_bytes = 64, .ttl_field = "ttl"});
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

// The cell timestamp (decoder, decode.time_format) and the key's time component (key spec,
// `input:`) read one time value with one function, keyspec::read_time_ms: every row goes through
// both and must give the same instant, or be rejected by both. The decoder adds one rule of its
// own: a cell timestamp lies in 1970..9999.
struct TimeRow {
  const char* json;  // the time field's value as JSON
  config::TimeFormat format;
  std::optional<std::int64_t> ms;  // nullopt: rejected
};

constexpr std::int64_t kMay1 = 1714564800000;  // 2024-05-01T12:00:00Z

const TimeRow kTimeRows[] = {
    {"1714564800000", config::TimeFormat::auto_detect, kMay1},
    {"1714564800", config::TimeFormat::auto_detect, kMay1},
    {R"("1714564800000")", config::TimeFormat::auto_detect, kMay1},  // decimal strings: numbers by magnitude
    {R"("1714564800")", config::TimeFormat::auto_detect, kMay1},
    {"1714564800.25", config::TimeFormat::auto_detect, kMay1 + 250},  // seconds with a fraction
    {"1.7145648e12", config::TimeFormat::auto_detect, kMay1},         // an exponent, integral
    {"1714564800000.0", config::TimeFormat::auto_detect, kMay1},
    {R"("2024-05-01T12:00:00Z")", config::TimeFormat::auto_detect, kMay1},
    {R"("2024-05-01T14:00:00.123456+02:00")", config::TimeFormat::auto_detect, kMay1 + 123},
    {"0", config::TimeFormat::auto_detect, 0},
    {R"("yesterday")", config::TimeFormat::auto_detect, std::nullopt},
    {R"("")", config::TimeFormat::auto_detect, std::nullopt},
    {R"(" 1714564800")", config::TimeFormat::auto_detect, std::nullopt},
    {"true", config::TimeFormat::auto_detect, std::nullopt},
    {R"({"ms":1714564800000})", config::TimeFormat::auto_detect, std::nullopt},
    {"[1714564800000]", config::TimeFormat::epoch_ms, std::nullopt},
    {"18446744073709551615", config::TimeFormat::auto_detect, std::nullopt},  // above int64
    {"1714564800", config::TimeFormat::epoch_ms, 1714564800},
    {R"("1714564800000")", config::TimeFormat::epoch_ms, kMay1},
    {"1714564800000.9", config::TimeFormat::epoch_ms, kMay1},
    {R"("2024-05-01T12:00:00Z")", config::TimeFormat::epoch_ms, std::nullopt},
    {"1714564800", config::TimeFormat::epoch_s, kMay1},
    {R"("1714564800")", config::TimeFormat::epoch_s, kMay1},
    {"1714564800.5", config::TimeFormat::epoch_s, kMay1 + 500},
    {"1714564800000", config::TimeFormat::epoch_s, 1714564800000000},  // a key time, not a cell timestamp
    {R"("2024-05-01T12:00:00Z")", config::TimeFormat::rfc3339, kMay1},
    {R"("2024-05-01t12:00:00z")", config::TimeFormat::rfc3339, kMay1},
    {"1714564800000", config::TimeFormat::rfc3339, std::nullopt},
    {R"("1714564800000")", config::TimeFormat::rfc3339, std::nullopt},
    {R"("2024-02-30T12:00:00Z")", config::TimeFormat::rfc3339, std::nullopt},
};

const char* input_name(config::TimeFormat format) {
  switch (format) {
    case config::TimeFormat::auto_detect:
      return "auto";
    case config::TimeFormat::epoch_ms:
      return "epoch_ms";
    case config::TimeFormat::epoch_s:
      return "epoch_s";
    case config::TimeFormat::rfc3339:
      return "rfc3339";
  }
  return "";
}

TEST(EventTime, DecoderAndKeySpecReadTheSameInstant) {
  constexpr std::int64_t kMaxCellTimeMs = 253402300799999;
  for (const auto& row : kTimeRows) {
    SCOPED_TRACE(std::string(input_name(row.format)) + " " + row.json);
    const std::string event = std::string(R"({"event_id":"x","ts":)") + row.json + "}";

    config::DecodeConfig config;
    config.time_format = row.format;
    config.kafka_time_fallback = false;
    EventDecoder decoder(config);
    DecodedEvent decoded;
    const auto invalid = decoder.decode(message(event), decoded);
    const std::optional<std::int64_t> cell_ms = invalid ? std::nullopt : std::optional(decoded.time_ms);
    if (invalid) {
      EXPECT_EQ(invalid->reason, "bad_time") << invalid->message;
    }

    // A decimal time component holds any ms >= 0, so its key shows what the key spec read.
    const auto spec = keyspec::KeySpec::from_yaml_text(
        std::string("components: [{name: t, type: time, field: ts, format: decimal, input: ") + input_name(row.format) +
            "}]",
        "time-table");
    JsonEvent fields;
    ASSERT_FALSE(fields.parse(event));
    std::string key;
    std::optional<std::int64_t> key_ms;
    if (!spec.encode(fields, {}, key)) key_ms = spec.decode(key).at(0).number;

    EXPECT_EQ(key_ms, row.ms);
    const bool cell_range = row.ms && *row.ms >= 0 && *row.ms <= kMaxCellTimeMs;
    EXPECT_EQ(cell_ms, cell_range ? row.ms : std::nullopt);
  }
}

}  // namespace
}  // namespace hbingest::event_formats
