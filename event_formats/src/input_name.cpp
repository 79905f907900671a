#include "hbingest/event_formats/input_name.h"

#include <array>
#include <utility>

namespace hbingest::event_formats {

namespace {

constexpr std::array<std::pair<std::string_view, KafkaInput>, 6> kKafkaInputs = {{
    {"topic", KafkaInput::topic},
    {"partition", KafkaInput::partition},
    {"offset", KafkaInput::offset},
    {"timestamp", KafkaInput::timestamp},
    {"key", KafkaInput::key},
    {"value", KafkaInput::value},
}};

[[noreturn]] void fail(std::string_view text, std::string_view what) {
  throw FieldPathError("input '" + std::string(text.substr(0, 64)) + (text.size() > 64 ? "...'" : "'") + ": " +
                       std::string(what));
}

}  // namespace

InputName parse_input_name(std::string_view text) {
  if (text.size() > kMaxPathBytes) fail(text, "longer than " + std::to_string(kMaxPathBytes) + " bytes");
  InputName input;
  input.text = std::string(text);
  if (text.starts_with("header:")) {
    input.source = InputSource::header;
    input.header = std::string(text.substr(7));
    if (input.header.empty()) fail(text, "expected a header name after 'header:'");
    return input;
  }
  if (text.starts_with("kafka:")) {
    input.source = InputSource::kafka;
    const std::string_view which = text.substr(6);
    for (const auto& [name, kafka] : kKafkaInputs) {
      if (which == name) {
        input.kafka = kafka;
        return input;
      }
    }
    fail(text, "expected kafka:topic, kafka:partition, kafka:offset, kafka:timestamp, kafka:key or kafka:value");
  }
  if (text == "key") {
    input.source = InputSource::key;
    return input;
  }
  if (text.starts_with("key.")) {
    input.source = InputSource::key;
    if (text.size() == 4) fail(text, "expected a field name after 'key.'");
    input.path = parse_field_path(text.substr(4));
    return input;
  }
  if (text.starts_with("key["))
    fail(text, "a key is read by name (key.<field>); a value field named key: value.key[...]");
  if (text.starts_with("value.")) {
    if (text.size() == 6) fail(text, "expected a field name after 'value.'");
    input.path = parse_field_path(text.substr(6));
    return input;
  }
  // A ':' in a plain name is most likely a misspelt prefix ("headers:x"): a value field with ':' in
  // its name is named explicitly.
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.substr(0, colon).find_first_of(".[") == std::string_view::npos) {
    fail(text, "unknown prefix '" + std::string(text.substr(0, colon + 1)) +
                   "' (header:, kafka:); a value field with ':' in its name: value.<name>");
  }
  input.path = parse_field_path(text);
  return input;
}

}  // namespace hbingest::event_formats
