#pragma once
// JSON event → event type, event time, cells, and a field view for the key spec.
// A bad event is data, not a failure: decode() returns an InvalidEvent naming the reason.
// Not thread-safe: one decoder per pipeline thread (it reuses its JSON parser buffers).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/source.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::ingest {

struct DecodedEvent {
  std::string event_type;
  std::int64_t time_ms = 0;
  std::optional<std::int64_t> ttl_ms;  // from the configured ttl_field, if present
  std::vector<connectors::Cell> cells;
};

struct InvalidEvent {
  std::string reason;   // short class for metrics and the DLQ header: invalid_json, too_large, missing_type, ...
  std::string message;  // human-readable, names the field
};

class EventDecoder {
 public:
  explicit EventDecoder(config::DecodeConfig config);
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Decodes `message` into `out`. On success, fields() views the event until the next decode(): the
  // fields as keyspec::JsonEvent reads them (the same view `hbingest key build` uses), with the Kafka
  // timestamp as the time field when decode.kafka_time_fallback stood in for a missing time.
  std::optional<InvalidEvent> decode(const connectors::SourceMessage& message, DecodedEvent& out);
  const keyspec::EventFields& fields() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::ingest
