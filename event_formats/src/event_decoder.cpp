#include "hbingest/event_formats/event_decoder.h"

#include <variant>

#include <nlohmann/json.hpp>

#include "cell_text.h"
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

// A message is bounded whole: its value, key and headers (each may be cells, a hostile producer may
// send a 1 MiB header), as decode.max_event_bytes says of "larger messages".
std::optional<DecodeFailure> too_large(const MessageView& message, std::size_t max_bytes) {
  std::size_t bytes = message.payload ? message.payload->size() : 0;
  if (message.key) bytes += message.key->size();
  for (const auto& header : message.headers) bytes += header.name.size() + (header.value ? header.value->size() : 0);
  if (bytes <= max_bytes) return std::nullopt;
  return DecodeFailure::invalid("too_large", "message is " + std::to_string(bytes) +
                                                 " bytes (value, key and headers), "
                                                 "max_event_bytes is " +
                                                 std::to_string(max_bytes));
}

// Appends `text` as a JSON string.
void append_json_string(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out.append("\\u00");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

// A record's members as one compact JSON object (a whole decoded key as cell text).
class JsonObjectWriter final : public Record::MemberVisitor {
 public:
  explicit JsonObjectWriter(std::string& out) : out_(out) {}
  void member(std::string_view name, const keyspec::FieldValue& value, bool is_null,
              const std::function<void(std::string&)>& append_text) override {
    out_.push_back(first_ ? '{' : ',');
    first_ = false;
    append_json_string(name, out_);
    out_.push_back(':');
    if (is_null) {
      out_.append("null");
    } else if (const auto* text = std::get_if<std::string_view>(&value)) {
      append_json_string(*text, out_);
    } else {
      append_text(out_);  // numbers, booleans and nested values are JSON as cell text already
    }
  }
  void finish() { out_.append(first_ ? "{}" : "}"); }

 private:
  std::string& out_;
  bool first_ = true;
};

// Inputs a name cache keeps at most: names come from the configuration, a few dozen; the bound
// only keeps a caller that makes names up from growing it without end.
constexpr std::size_t kMaxCachedNames = 1024;

// The key spec's and the row mapping's view of a decoded message (MessageFields): the record's
// fields as `hbingest key build` reads them, except that an event whose time came from the Kafka
// timestamp shows that time as its time field, so the key's time component and the cell timestamp
// agree; and the key, headers and metadata of input_name.h.
//
// The type and time fields are the ones a key is made of, and decode() has already looked them up:
// their values are kept and given again instead of being searched for among the members a second
// time (callgrind: a lookup is ~170 instructions, ~3 % of an order's CPU path for the two).
class DecodedFields final : public MessageFields {
 public:
  std::optional<keyspec::FieldValue> field(std::string_view name) const override {
    if (time_value_ && name == time_field_) return time_value_;
    if (type_value_ && name == type_field_) return type_value_;
    // Most names are plain top-level fields: read without parsing or a cache lookup.
    if (is_plain(name)) return record_ != nullptr ? record_->field(name) : std::nullopt;
    const InputName* input = parsed(name);
    return input != nullptr ? this->input(*input) : std::nullopt;
  }

  std::optional<keyspec::FieldValue> input(const InputName& name) const override {
    switch (name.source) {
      case InputSource::value:
        if (record_ == nullptr) return std::nullopt;
        if (name.path.is_top_level()) return field_value(name.path.steps.front().name);
        return record_->at(name.path);
      case InputSource::key:
        return key_value(name.path);
      case InputSource::header:
        if (const auto* header = last_header(name.header)) {
          return header->value ? keyspec::FieldValue{*header->value} : keyspec::FieldValue{};
        }
        return std::nullopt;
      case InputSource::kafka:
        return kafka_value(name.kafka);
    }
    return std::nullopt;
  }

  bool append_text(const InputName& name, std::string& out) const override {
    switch (name.source) {
      case InputSource::value:
        return record_ != nullptr && record_->append_text_at(name.path, out);
      case InputSource::key:
        return append_key_text(name.path, out);
      case InputSource::header:
        if (const auto* header = last_header(name.header)) {
          if (header->value) out.append(*header->value);
          return true;
        }
        return false;
      case InputSource::kafka:
        return append_kafka_text(name.kafka, out);
    }
    return false;
  }

  bool visit_members(const InputName& name, Record::MemberVisitor& visit) const override {
    if (name.source == InputSource::value) return record_ != nullptr && record_->visit_members(name.path, visit);
    if (name.source != InputSource::key) return false;
    const Record* key = key_record();
    return key != nullptr && key->visit_members(name.path, visit);
  }

  // Before each message: nothing is known of it yet.
  void start(const MessageView& message, InputFormat* key_input, bool json_key) {
    message_ = message;
    record_ = nullptr;
    type_value_.reset();
    time_value_.reset();
    key_input_ = key_input;
    json_key_ = json_key;
    key_state_ = KeyState::unread;
    key_failure_.reset();
  }

  // Decodes a structured key now (nothing for bytes, text or a null key); the failure if it does
  // not decode.
  const std::optional<DecodeFailure>& decode_key() const {
    key_record();
    return key_failure_;
  }

  const Record* record_ = nullptr;  // the current message's value, from its topic's format; null: none
  std::string type_field_;
  std::string time_field_;
  // What field(type_field_) and field(time_field_) give for this event, once decode() read them;
  // the time field's is the Kafka timestamp where that stood in for a missing time.
  std::optional<keyspec::FieldValue> type_value_;
  std::optional<keyspec::FieldValue> time_value_;

 private:
  // scalar: a JSON key that is a string, number, boolean or null rather than an object.
  enum class KeyState { unread, decoded, scalar, failed };

  // No character of the grammar's prefixes and paths, and not the key.
  static bool is_plain(std::string_view name) {
    for (const char c : name) {
      if (c == '.' || c == '[' || c == ']' || c == ':' || c == '\\') return false;
    }
    return name != "key";
  }

  const InputName* parsed(std::string_view name) const {
    if (const auto it = names_.find(name); it != names_.end()) return it->second ? &*it->second : nullptr;
    std::optional<InputName> input;
    try {
      input = parse_input_name(name);
    } catch (const FieldPathError&) {
      // Absent, as the key spec reads a missing field; check-config names the error.
    }
    if (names_.size() < kMaxCachedNames) {
      const auto it = names_.emplace(std::string(name), std::move(input)).first;
      return it->second ? &*it->second : nullptr;
    }
    uncached_ = std::move(input);
    return uncached_ ? &*uncached_ : nullptr;
  }

  std::optional<keyspec::FieldValue> field_value(std::string_view name) const {
    if (time_value_ && name == time_field_) return time_value_;
    if (type_value_ && name == type_field_) return type_value_;
    return record_->field(name);
  }

  const HeaderView* last_header(std::string_view name) const {
    for (auto it = message_.headers.rbegin(); it != message_.headers.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }

  bool structured_key() const { return key_input_ != nullptr; }

  // The decoded key; null for a null key, a raw key format, or a key that did not decode.
  const Record* key_record() const {
    if (key_state_ == KeyState::unread) {
      key_state_ = KeyState::failed;
      if (structured_key() && message_.key) {
        key_failure_ = key_input_->parse(*message_.key);
        if (key_failure_ && json_key_ && key_failure_->reason == "not_an_object" && read_scalar_key()) {
          key_failure_.reset();
          key_state_ = KeyState::scalar;
        } else if (key_failure_) {
          key_failure_->message = "Kafka key: " + key_failure_->message;
          if (key_failure_->kind == DecodeFailure::Kind::invalid) key_failure_->reason = "invalid_key";
        } else {
          key_state_ = KeyState::decoded;
        }
      }
    }
    return key_state_ == KeyState::decoded ? &key_input_->record() : nullptr;
  }

  // A JSON key that is not an object (Kafka Connect's JsonConverter writes "o-1" for a string key).
  bool read_scalar_key() const {
    const auto json = nlohmann::json::parse(*message_.key, nullptr, false);
    if (json.is_discarded() || json.is_structured()) return false;
    if (json.is_string()) {
      key_scalar_text_ = json.get<std::string>();
      key_scalar_ = std::string_view(key_scalar_text_);
    } else if (json.is_boolean()) {
      key_scalar_ = json.get<bool>();
    } else if (json.is_number_integer() && !(json.is_number_unsigned() && json.get<std::uint64_t>() > INT64_MAX)) {
      key_scalar_ = json.get<std::int64_t>();
    } else if (json.is_number()) {
      key_scalar_ = json.get<double>();
    } else {
      key_scalar_ = std::monostate{};
    }
    return true;
  }

  std::optional<keyspec::FieldValue> key_value(const FieldPath& path) const {
    const bool whole = path.steps.empty();
    if (!message_.key) return whole ? std::optional<keyspec::FieldValue>(keyspec::FieldValue{}) : std::nullopt;
    if (!structured_key()) {
      return whole ? std::optional<keyspec::FieldValue>(keyspec::FieldValue{*message_.key}) : std::nullopt;
    }
    if (key_record() == nullptr && key_state_ == KeyState::scalar) {
      return whole ? std::optional<keyspec::FieldValue>(key_scalar_) : std::nullopt;
    }
    const Record* key = key_record();
    if (key == nullptr) return std::nullopt;
    return whole ? std::optional<keyspec::FieldValue>(keyspec::NestedValue{}) : key->at(path);
  }

  bool append_key_text(const FieldPath& path, std::string& out) const {
    const bool whole = path.steps.empty();
    if (!message_.key) return whole;  // null: present, no text
    if (!structured_key()) {
      if (whole) out.append(*message_.key);
      return whole;
    }
    const Record* key = key_record();
    if (key == nullptr && key_state_ == KeyState::scalar) {
      if (!whole) return false;
      if (const auto* text = std::get_if<std::string_view>(&key_scalar_)) out.append(*text);
      if (const auto* b = std::get_if<bool>(&key_scalar_)) out.append(*b ? "true" : "false");
      if (const auto* i = std::get_if<std::int64_t>(&key_scalar_)) append_integer(*i, out);
      if (const auto* d = std::get_if<double>(&key_scalar_)) append_double(*d, out);
      return true;
    }
    if (key == nullptr) return false;
    if (!whole) return key->append_text_at(path, out);
    JsonObjectWriter writer(out);
    key->visit_members(path, writer);
    writer.finish();
    return true;
  }

  std::optional<keyspec::FieldValue> kafka_value(KafkaInput which) const {
    switch (which) {
      case KafkaInput::topic:
        return keyspec::FieldValue{message_.topic};
      case KafkaInput::partition:
        return keyspec::FieldValue{std::int64_t{message_.partition}};
      case KafkaInput::offset:
        return keyspec::FieldValue{message_.offset};
      case KafkaInput::timestamp:
        if (message_.timestamp_ms < 0) return std::nullopt;
        return keyspec::FieldValue{message_.timestamp_ms};
      case KafkaInput::key:
        return message_.key ? keyspec::FieldValue{*message_.key} : keyspec::FieldValue{};
      case KafkaInput::value:
        return message_.payload ? keyspec::FieldValue{*message_.payload} : keyspec::FieldValue{};
    }
    return std::nullopt;
  }

  bool append_kafka_text(KafkaInput which, std::string& out) const {
    switch (which) {
      case KafkaInput::topic:
        out.append(message_.topic);
        return true;
      case KafkaInput::partition:
        out.append(std::to_string(message_.partition));
        return true;
      case KafkaInput::offset:
        out.append(std::to_string(message_.offset));
        return true;
      case KafkaInput::timestamp:
        if (message_.timestamp_ms < 0) return false;
        out.append(std::to_string(message_.timestamp_ms));
        return true;
      case KafkaInput::key:
        if (message_.key) out.append(*message_.key);
        return true;
      case KafkaInput::value:
        if (message_.payload) out.append(*message_.payload);
        return true;
    }
    return false;
  }

  MessageView message_;
  InputFormat* key_input_ = nullptr;  // the structured key format's; null for bytes and text
  mutable KeyState key_state_ = KeyState::unread;
  bool json_key_ = false;  // the key format is json: a scalar JSON key is a key too
  mutable std::optional<DecodeFailure> key_failure_;
  mutable keyspec::FieldValue key_scalar_;                                      // KeyState::scalar's value
  mutable std::string key_scalar_text_;                                         // a string scalar's text, unescaped
  mutable std::map<std::string, std::optional<InputName>, std::less<>> names_;  // nullopt: does not parse
  mutable std::optional<InputName> uncached_;                                   // past kMaxCachedNames
};

}  // namespace

struct EventDecoder::Impl {
  // How one topic's keys are read: the format, and its own InputFormat for a structured one (a
  // format instance holds one parsed record at a time: the value's must stay while the key is read).
  struct KeyReading {
    config::KeyFormat format = config::KeyFormat::text;
    InputFormat* input = nullptr;
  };

  config::DecodeConfig config;
  EventDecoderOptions options;
  DecodedFields fields;
  std::vector<std::unique_ptr<InputFormat>> formats;            // one per format configured, values and keys
  InputFormat* default_format = nullptr;                        // decode.format's
  std::map<std::string, InputFormat*, std::less<>> by_topic;    // decode.topic_formats
  KeyReading default_key;                                       // decode.key_format's
  std::map<std::string, KeyReading, std::less<>> key_by_topic;  // decode.topic_key_formats

  InputFormat& format_of(std::string_view topic) const {
    if (by_topic.empty()) return *default_format;
    const auto it = by_topic.find(topic);
    return it == by_topic.end() ? *default_format : *it->second;
  }

  const KeyReading& key_of(std::string_view topic) const {
    if (key_by_topic.empty()) return default_key;
    const auto it = key_by_topic.find(topic);
    return it == key_by_topic.end() ? default_key : it->second;
  }

  // Starts the field view on `message`; with reads_key, decodes its key now.
  std::optional<DecodeFailure> start(const MessageView& message) {
    if (auto failure = too_large(message, config.max_event_bytes)) return failure;
    const KeyReading& key = key_of(message.topic);
    fields.start(message, key.input, key.format == config::KeyFormat::json);
    if (!options.reads_key) return std::nullopt;
    return fields.decode_key();
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
      return DecodeFailure::invalid("missing_time", "event has no time field '" + config.time_field + "'");
    }
    // The key spec reads the same field with the same function (its time component's `input:`).
    if (const auto why = keyspec::read_time_ms(*value, time_input(config.time_format), time_ms); !why.empty()) {
      std::string text = "time field '" + config.time_field + "': " + std::string(why);
      if (const auto* s = std::get_if<std::string_view>(&*value)) text += ": '" + std::string(s->substr(0, 64)) + "'";
      return DecodeFailure::invalid("bad_time", std::move(text));
    }
    return check_time_range(time_ms, value);
  }

  // `value`: what the key spec is to read as the time field; nullopt: the record's own value.
  std::optional<DecodeFailure> check_time_range(std::int64_t time_ms, std::optional<keyspec::FieldValue> value) {
    if (time_ms < 0 || time_ms > kMaxCellTimeMs) {
      return DecodeFailure::invalid("bad_time", "time field '" + config.time_field + "' is out of range (" +
                                                    std::to_string(time_ms) + " ms is not in 1970..9999)");
    }
    fields.time_value_ = value ? std::move(value) : keyspec::FieldValue{time_ms};
    return std::nullopt;
  }
};

EventDecoder::EventDecoder(config::DecodeConfig config, connectors::SchemaRegistry* registry, SchemaCacheLimits limits,
                           EventDecoderOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->options = options;
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
  std::map<config::EventFormat, InputFormat*> key_made;
  const auto key_reading = [&](config::KeyFormat kind) {
    Impl::KeyReading reading{kind, nullptr};
    if (const auto decoded = config::key_event_format(kind)) {
      auto& slot = key_made[*decoded];
      if (slot == nullptr) slot = impl_->formats.emplace_back(make_input_format(*decoded, registry, limits)).get();
      reading.input = slot;
    }
    return reading;
  };
  impl_->default_key = key_reading(impl_->config.key_format);
  for (const auto& [topic, name] : impl_->config.topic_key_formats) {
    const auto kind = config::key_format_named(name);
    if (!kind) throw std::invalid_argument("decode.topic_key_formats." + topic + ": unknown key format '" + name + "'");
    impl_->key_by_topic.emplace(topic, key_reading(*kind));
  }
}
EventDecoder::~EventDecoder() = default;

const MessageFields& EventDecoder::fields() const { return impl_->fields; }

config::KeyFormat EventDecoder::key_format_of(std::string_view topic) const { return impl_->key_of(topic).format; }

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
  const Impl::KeyReading& key = impl_->key_of(message.topic);
  impl_->fields.start(message, key.input, key.format == config::KeyFormat::json);
  if (!message.payload) return DecodeFailure::invalid("tombstone", "the message has a null value (a tombstone)");
  const std::string_view payload = *message.payload;
  if (auto failure = too_large(message, config.max_event_bytes)) return failure;
  if (impl_->options.reads_key) {
    if (auto failure = impl_->fields.decode_key()) return failure;
  }
  InputFormat& format = impl_->format_of(message.topic);
  if (auto failure = format.parse(payload)) return failure;
  const Record& json = format.record();
  impl_->fields.record_ = &json;

  const auto type = json.field(config.event_type_field);
  if (is_null(type))
    return DecodeFailure::invalid("missing_type", "event has no type field '" + config.event_type_field + "'");
  const auto* type_text = std::get_if<std::string_view>(&*type);
  if (type_text == nullptr) {
    return DecodeFailure::invalid("bad_type", "event type field '" + config.event_type_field + "' is not a string");
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
        return DecodeFailure::invalid("bad_ttl",
                                      "ttl field '" + *config.ttl_field + "' is not a positive integer (ms)");
      }
      out.ttl_ms = *ms;
    }
  }

  return std::nullopt;
}

std::optional<DecodeFailure> EventDecoder::decode_key_only(const MessageView& message, DecodedEvent& out) {
  out.event_type.clear();
  out.ttl_ms.reset();
  if (auto failure = impl_->start(message)) return failure;
  if (message.timestamp_ms < 0)
    return DecodeFailure::invalid("missing_time", "the message has no value and no Kafka timestamp");
  if (message.timestamp_ms > kMaxCellTimeMs) {
    return DecodeFailure::invalid(
        "bad_time", "Kafka timestamp " + std::to_string(message.timestamp_ms) + " ms is not in 1970..9999");
  }
  out.time_ms = message.timestamp_ms;
  return std::nullopt;
}

}  // namespace hbingest::event_formats
