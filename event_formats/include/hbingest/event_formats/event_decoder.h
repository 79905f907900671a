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
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {

struct DecodedEvent {
  std::string event_type;
  std::int64_t time_ms = 0;
  std::optional<std::int64_t> ttl_ms;  // from the configured ttl_field, if present
};

// What decode() reads of a Kafka message.
struct MessageView {
  std::string_view topic;
  std::string_view payload;
  std::int64_t timestamp_ms = -1;  // -1: none
};

class EventDecoder {
 public:
  // `registry` must outlive the decoder; it may be null when no configured format needs one
  // (else std::invalid_argument, as make_input_format).
  explicit EventDecoder(config::DecodeConfig config, connectors::SchemaRegistry* registry = nullptr,
                        SchemaCacheLimits limits = {});
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Decodes `message` into `out`. On success, fields() views the event until the next decode(): the
  // fields as the topic's format reads them (the same view `hbingest key build` uses), with the
  // Kafka timestamp as the time field when decode.kafka_time_fallback stood in for a missing time.
  std::optional<DecodeFailure> decode(const MessageView& message, DecodedEvent& out);
  const keyspec::EventFields& fields() const;
  // The decoded value, until the next decode(); null after a failure. Its route's row mapping makes
  // the cells (routing::RowMapping).
  const Record* record() const;
  // Summed over this decoder's formats.
  SchemaCacheStats schema_cache_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::event_formats
