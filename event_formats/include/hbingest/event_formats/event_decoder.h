#pragma once
// A Kafka message → event type, event time, the decoded record and a field view for the key spec,
// the row mapping and table templates: the input
// format of its topic (decode.format, decode.topic_formats) reads the bytes into a Record, and this
// one step does the rest for every format. A bad event is data, not a failure: decode() returns a
// DecodeFailure naming the reason; one of kind `unavailable` (the schema registry did not answer)
// is no verdict on the event, which must be decoded again later.
// Not thread-safe: one decoder per pipeline thread (its formats reuse their buffers).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"
#include "hbingest/event_formats/message_fields.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {

struct DecodedEvent {
  std::string event_type;
  std::int64_t time_ms = 0;
  std::optional<std::int64_t> ttl_ms;  // from the configured ttl_field, if present
};

// A Kafka record header as decode() reads it (connectors::MessageHeader's view).
struct HeaderView {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a header without a value
};

// What decode() reads of a Kafka message.
struct MessageView {
  std::string_view topic;
  std::optional<std::string_view> payload;  // nullopt: a null value (tombstone)
  std::int64_t timestamp_ms = -1;           // -1: none
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::optional<std::string_view> key{};  // nullopt: a null key
  std::span<const HeaderView> headers{};  // in the message's order
};

struct EventDecoderOptions {
  // Some route reads the decoded key (key, key.<path>; InputName::reads_decoded_key): decode()
  // then decodes a structured key (json, avro, protobuf, json_schema) with the value, and a key that
  // does not decode makes the event invalid (invalid_key), or unavailable when its schema cannot be
  // fetched now. Otherwise a key is decoded on the first read, and one that does not decode reads
  // as absent.
  bool reads_key = false;
};

class EventDecoder {
 public:
  // `registry` must outlive the decoder; it may be null when no configured format needs one
  // (else std::invalid_argument, as make_input_format).
  explicit EventDecoder(config::DecodeConfig config, connectors::SchemaRegistry* registry = nullptr,
                        SchemaCacheLimits limits = {}, EventDecoderOptions options = {});
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Decodes `message` into `out`. On success, fields() views the event until the next decode(): the
  // fields as the topic's format reads them (the same view `hbingest key build` uses), with the
  // Kafka timestamp as the time field when decode.kafka_time_fallback stood in for a missing time.
  // A tombstone (null value) is invalid with reason `tombstone`: decode_key_only reads it.
  std::optional<DecodeFailure> decode(const MessageView& message, DecodedEvent& out);
  // A message without its value, a tombstone's way: fields() gives the key, headers and metadata,
  // and no value path. No event type; the time is the Kafka timestamp (none: invalid missing_time);
  // no cells. The key is decoded as decode() does (EventDecoderOptions::reads_key).
  std::optional<DecodeFailure> decode_key_only(const MessageView& message, DecodedEvent& out);
  const MessageFields& fields() const;
  // The key format of `topic` (decode.topic_key_formats, else decode.key_format).
  config::KeyFormat key_format_of(std::string_view topic) const;
  // The decoded value, until the next decode(); null after a failure and for a tombstone. Its
  // route's row mapping makes the cells (routing::RowMapping).
  const Record* record() const;
  // Summed over this decoder's formats.
  SchemaCacheStats schema_cache_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::event_formats
