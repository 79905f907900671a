#include "hbingest/event_formats/event_decoder.h"

#include <variant>

#include "hbingest/event_formats/format_factory.h"
#include "hbingest/keyspec/event_time.h"

namespace hbingest::event_formats {

namespace {

// A cell timestamp is an HBase timestamp: ms since the epoch, not negative; 9999-12-31T23:59:59.999Z
// is the last instant the query API and the key spec's date patterns can print.
constexpr std::int64_t kMaxCellTimeMs = 253402300799999;

keyspec::TimeInput time_input(config::TimeFormat format) {
  switch (format) {
    case config::TimeFormat::auto_detect:
      return keyspec::TimeInput::Auto;
    case config::TimeFormat::epoch_ms:
      return keyspec::TimeInput::EpochMs;
    case config::TimeFormat::epoch_s:
      return keyspec::TimeInput::EpochS;
    case config::TimeFormat::rfc3339:
      return keyspec::TimeInput::Rfc3339;
  }
  return keyspec::TimeInput::Auto;
}

bool is_null(const std::optional<keyspec::FieldValue>& value) {
  return !value || std::holds_alternative<std::monostate>(*value);
}

DecodeFailure invalid(std::string reason, std::string message) {
  return DecodeFailure{DecodeFailure::Kind::invalid, std::move(reason), std::move(message), std::nullopt};
}

// The key spec's view of a decoded event: the record's fields as `hbingest key build` reads them, except
// that an event whose time came from the Kafka timestamp shows that time as its time field, so the
// key's time component and the cell timestamp agree.
//
// The type and time fields are the ones a key is made of, and decode() has already looked them up:
// their values are kept and given again instead of being searched for among the members a second
// time (callgrind: a lookup is ~170 instructions, ~3 % of an order's CPU path for the two).
class DecodedFields final : public keyspec::EventFields {
 public:
  std::optional<keyspec::FieldValue> field(std::string_view name) const override {
    if (time_value_ && name == time_field_) return time_value_;
    if (type_value_ && name == type_field_) return type_value_;
    return record_->field(name);
  }

  // Before each event: nothing is known of it yet.
  void forget_event() {
    type_value_.reset();
    time_value_.reset();
  }

  const Record* record_ = nullptr;  // the current message's, from its topic's format
  std::string type_field_;
  std::string time_field_;
  // What field(type_field_) and field(time_field_) give for this event, once decode() read them;
  // the time field's is the Kafka timestamp where that stood in for a missing time.
  std::optional<keyspec::FieldValue> type_value_;
  std::optional<keyspec::FieldValue> time_value_;
};

}  // namespace

struct EventDecoder::Impl {
  config::DecodeConfig config;
  DecodedFields fields;
  std::vector<std::unique_ptr<InputFormat>> formats;          // one per format configured
  InputFormat* default_format = nullptr;                      // decode.format's
  std::map<std::string, InputFormat*, std::less<>> by_topic;  // decode.topic_formats

  InputFormat& format_of(std::string_view topic) const {
    if (by_topic.empty()) return *default_format;
    const auto it = by_topic.find(topic);
    return it == by_topic.end() ? *default_format : *it->second;
  }

  std::optional<DecodeFailure> read_time(const MessageView& message, std::int64_t& time_ms) {
    if (const auto typed = fields.record_->typed_time_ms(config.time_field)) {
      time_ms = *typed;
      return check_time_range(time_ms, std::nullopt);
    }
    const auto value = fields.record_->field(config.time_field);
    if (is_null(value)) {
      if (config.kafka_time_fallback && message.timestamp_ms >= 0) {
        time_ms = message.timestamp_ms;
        fields.time_value_ = keyspec::FieldValue{time_ms};
        return std::nullopt;
      }
      return invalid("missing_time", "event has no time field '" + config.time_field + "'");
    }
    // The key spec reads the same field with the same function (its time component's `input:`).
    if (const auto why = keyspec::read_time_ms(*value, time_input(config.time_format), time_ms); !why.empty()) {
      std::string text = "time field '" + config.time_field + "': " + std::string(why);
      if (const auto* s = std::get_if<std::string_view>(&*value)) text += ": '" + std::string(s->substr(0, 64)) + "'";
      return invalid("bad_time", std::move(text));
    }
    return check_time_range(time_ms, value);
  }

  // `value`: what the key spec is to read as the time field; nullopt: the record's own value.
  std::optional<DecodeFailure> check_time_range(std::int64_t time_ms, std::optional<keyspec::FieldValue> value) {
    if (time_ms < 0 || time_ms > kMaxCellTimeMs) {
      return invalid("bad_time", "time field '" + config.time_field + "' is out of range (" + std::to_string(time_ms) +
                                     " ms is not in 1970..9999)");
    }
    fields.time_value_ = value ? std::move(value) : keyspec::FieldValue{time_ms};
    return std::nullopt;
  }
};

EventDecoder::EventDecoder(config::DecodeConfig config, connectors::SchemaRegistry* registry, SchemaCacheLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->fields.type_field_ = impl_->config.event_type_field;
  impl_->fields.time_field_ = impl_->config.time_field;
  std::map<config::EventFormat, InputFormat*> made;
  const auto format = [&](config::EventFormat kind) {
    auto& slot = made[kind];
    if (slot == nullptr) slot = impl_->formats.emplace_back(make_input_format(kind, registry, limits)).get();
    return slot;
  };
  impl_->default_format = format(impl_->config.format);
  for (const auto& [topic, name] : impl_->config.topic_formats) {
    const auto kind = config::event_format_named(name);
    if (!kind) throw std::invalid_argument("decode.topic_formats." + topic + ": unknown format '" + name + "'");
    impl_->by_topic.emplace(topic, format(*kind));
  }
}
EventDecoder::~EventDecoder() = default;

const keyspec::EventFields& EventDecoder::fields() const { return impl_->fields; }

const Record* EventDecoder::record() const { return impl_->fields.record_; }

SchemaCacheStats EventDecoder::schema_cache_stats() const {
  SchemaCacheStats sum;
  for (const auto& format : impl_->formats) {
    const auto stats = format->schema_cache_stats();
    sum.fetches += stats.fetches;
    sum.fetch_failures += stats.fetch_failures;
    sum.cached_schemas += stats.cached_schemas;
    sum.cached_bytes += stats.cached_bytes;
  }
  return sum;
}

std::optional<DecodeFailure> EventDecoder::decode(const MessageView& message, DecodedEvent& out) {
  const auto& config = impl_->config;
  if (message.payload.size() > config.max_event_bytes) {
    return invalid("too_large", "event is " + std::to_string(message.payload.size()) + " bytes, max_event_bytes is " +
                                    std::to_string(config.max_event_bytes));
  }
  impl_->fields.forget_event();
  impl_->fields.record_ = nullptr;
  InputFormat& format = impl_->format_of(message.topic);
  if (auto failure = format.parse(message.payload)) return failure;
  const Record& json = format.record();
  impl_->fields.record_ = &json;

  const auto type = json.field(config.event_type_field);
  if (is_null(type)) return invalid("missing_type", "event has no type field '" + config.event_type_field + "'");
  const auto* type_text = std::get_if<std::string_view>(&*type);
  if (type_text == nullptr) {
    return invalid("bad_type", "event type field '" + config.event_type_field + "' is not a string");
  }
  out.event_type.assign(*type_text);
  impl_->fields.type_value_ = type;
  if (auto error = impl_->read_time(message, out.time_ms)) return error;

  out.ttl_ms.reset();
  if (config.ttl_field) {
    const auto ttl = json.field(*config.ttl_field);
    if (!is_null(ttl)) {
      const auto* ms = std::get_if<std::int64_t>(&*ttl);
      if (ms == nullptr || *ms <= 0) {
        return invalid("bad_ttl", "ttl field '" + *config.ttl_field + "' is not a positive integer (ms)");
      }
      out.ttl_ms = *ms;
    }
  }

  return std::nullopt;
}

}  // namespace hbingest::event_formats
