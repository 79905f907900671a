#include "hbingest/ingest/event_decoder.h"

#include <charconv>
#include <simdjson.h>

#include "hbingest/keyspec/event_time.h"

namespace hbingest::ingest {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// A cell timestamp is an HBase timestamp: ms since the epoch, not negative; 9999-12-31T23:59:59.999Z
// is the last instant the query API and the key spec's date patterns can print.
constexpr std::int64_t kMaxCellTimeMs = 253402300799999;

keyspec::TimeInput time_input(config::TimeFormat format) {
  switch (format) {
    case config::TimeFormat::auto_detect: return keyspec::TimeInput::Auto;
    case config::TimeFormat::epoch_ms: return keyspec::TimeInput::EpochMs;
    case config::TimeFormat::epoch_s: return keyspec::TimeInput::EpochS;
    case config::TimeFormat::rfc3339: return keyspec::TimeInput::Rfc3339;
  }
  return keyspec::TimeInput::Auto;
}

std::string scalar_text(const element& value) {
  switch (value.type()) {
    case element_type::STRING:
      return std::string(std::string_view(value.get_string().value_unsafe()));
    case element_type::INT64:
      return std::to_string(value.get_int64().value_unsafe());
    case element_type::UINT64:
      return std::to_string(value.get_uint64().value_unsafe());
    case element_type::DOUBLE: {
      // Shortest text that reads back to the same double; an integral one keeps a ".0" so the cell
      // still says it was a JSON float (410.0 stays "410.0", as Python and Java producers write it).
      char buffer[32];
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get_double().value_unsafe());
      std::string text(buffer, result.ptr);
      if (text.find_first_of(".eEni") == std::string::npos) text += ".0";
      return text;
    }
    case element_type::BOOL:
      return value.get_bool().value_unsafe() ? "true" : "false";
    case element_type::NULL_VALUE:
      return {};
    case element_type::ARRAY:
    case element_type::OBJECT:
      return simdjson::minify(value);
  }
  return {};
}

}  // namespace

// Field view over the parsed document for the key spec. Values point into the parser's buffers.
class JsonEventFields final : public keyspec::EventFields {
 public:
  std::optional<keyspec::FieldValue> field(std::string_view name) const override {
    // An event whose time came from the Kafka timestamp shows that time to the key spec too, so
    // the key's time component and the cell timestamp agree.
    if (fallback_time_ms_ && name == time_field_) return keyspec::FieldValue{*fallback_time_ms_};
    element value;
    if (object_.at_key(name).get(value) != simdjson::SUCCESS) return std::nullopt;
    switch (value.type()) {
      case element_type::STRING:
        return keyspec::FieldValue{std::string_view(value.get_string().value_unsafe())};
      case element_type::INT64:
        return keyspec::FieldValue{value.get_int64().value_unsafe()};
      case element_type::UINT64: {
        const std::uint64_t u = value.get_uint64().value_unsafe();
        return keyspec::FieldValue{static_cast<double>(u)};
      }
      case element_type::DOUBLE:
        return keyspec::FieldValue{value.get_double().value_unsafe()};
      case element_type::BOOL:
        return keyspec::FieldValue{value.get_bool().value_unsafe()};
      case element_type::NULL_VALUE:
        return keyspec::FieldValue{std::monostate{}};
      case element_type::ARRAY:
      case element_type::OBJECT:
        return std::nullopt;  // nested values cannot be key parts
    }
    return std::nullopt;
  }
  simdjson::dom::object object_;
  std::string time_field_;
  std::optional<std::int64_t> fallback_time_ms_;
};

struct EventDecoder::Impl {
  config::DecodeConfig config;
  simdjson::dom::parser parser;
  JsonEventFields fields;

  std::optional<InvalidEvent> read_time(const element& object, const connectors::SourceMessage& message,
                                        std::int64_t& time_ms) {
    element value;
    if (object.at_key(config.time_field).get(value) != simdjson::SUCCESS || value.is_null()) {
      if (config.kafka_time_fallback && message.timestamp_ms >= 0) {
        time_ms = message.timestamp_ms;
        fields.fallback_time_ms_ = time_ms;
        return std::nullopt;
      }
      return InvalidEvent{"missing_time", "event has no time field '" + config.time_field + "'"};
    }
    // The key spec reads the same field with the same function (its time component's `input:`).
    const auto field = fields.field(config.time_field);
    std::string_view why = "wrong type (expected a time)";
    if (field) why = keyspec::read_time_ms(*field, time_input(config.time_format), time_ms);
    if (!why.empty()) {
      std::string text = "time field '" + config.time_field + "': " + std::string(why);
      if (value.is_string()) text += ": '" + std::string(value.get_string().value_unsafe().substr(0, 64)) + "'";
      return InvalidEvent{"bad_time", std::move(text)};
    }
    if (time_ms < 0 || time_ms > kMaxCellTimeMs) {
      return InvalidEvent{"bad_time", "time field '" + config.time_field + "' is out of range (" +
                                          std::to_string(time_ms) + " ms is not in 1970..9999)"};
    }
    return std::nullopt;
  }
};

EventDecoder::EventDecoder(config::DecodeConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->fields.time_field_ = impl_->config.time_field;
}
EventDecoder::~EventDecoder() = default;

const keyspec::EventFields& EventDecoder::fields() const { return impl_->fields; }

std::optional<InvalidEvent> EventDecoder::decode(const connectors::SourceMessage& message, DecodedEvent& out) {
  const auto& config = impl_->config;
  if (message.payload.size() > config.max_event_bytes) {
    return InvalidEvent{"too_large", "event is " + std::to_string(message.payload.size()) + " bytes, max_event_bytes is " +
                                         std::to_string(config.max_event_bytes)};
  }
  element document;
  if (const auto error = impl_->parser.parse(message.payload).get(document); error != simdjson::SUCCESS) {
    return InvalidEvent{"invalid_json", std::string("payload is not valid JSON: ") + simdjson::error_message(error)};
  }
  impl_->fields.fallback_time_ms_.reset();
  if (document.get_object().get(impl_->fields.object_) != simdjson::SUCCESS) {
    return InvalidEvent{"not_an_object", "payload is JSON but not an object"};
  }

  element type;
  if (document.at_key(config.event_type_field).get(type) != simdjson::SUCCESS || type.is_null()) {
    return InvalidEvent{"missing_type", "event has no type field '" + config.event_type_field + "'"};
  }
  if (!type.is_string()) {
    return InvalidEvent{"bad_type", "event type field '" + config.event_type_field + "' is not a string"};
  }
  out.event_type.assign(type.get_string().value_unsafe());
  if (auto error = impl_->read_time(document, message, out.time_ms)) return error;

  out.ttl_ms.reset();
  if (config.ttl_field) {
    element ttl;
    if (document.at_key(*config.ttl_field).get(ttl) == simdjson::SUCCESS && !ttl.is_null()) {
      if (!ttl.is_int64() || ttl.get_int64().value_unsafe() <= 0) {
        return InvalidEvent{"bad_ttl", "ttl field '" + *config.ttl_field + "' is not a positive integer (ms)"};
      }
      out.ttl_ms = ttl.get_int64().value_unsafe();
    }
  }

  out.cells.clear();
  if (config.columns != config::ColumnsMode::raw) {
    for (auto [key, value] : impl_->fields.object_) {
      if (value.is_null() && !config.write_null_fields) continue;
      out.cells.push_back({config.family, std::string(key), scalar_text(value)});
    }
  }
  if (config.columns != config::ColumnsMode::fields) {
    out.cells.push_back({config.family, config.raw_qualifier, message.payload});
  }
  return std::nullopt;
}

}  // namespace hbingest::ingest
