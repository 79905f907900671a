#include "hbingest/event_formats/input_name.h"

namespace hbingest::event_formats {

InputName parse_input_name(std::string_view text) {
  InputName input;
  if (text.starts_with("kafka:")) {
    const std::string_view what = text.substr(6);
    if (what == "topic") {
      input.kind = InputName::Kind::kafka_topic;
    } else if (what == "partition") {
      input.kind = InputName::Kind::kafka_partition;
    } else if (what == "offset") {
      input.kind = InputName::Kind::kafka_offset;
    } else if (what == "timestamp") {
      input.kind = InputName::Kind::kafka_timestamp;
    } else if (what == "key") {
      input.kind = InputName::Kind::kafka_key;
    } else if (what == "value") {
      input.kind = InputName::Kind::kafka_value;
    } else {
      throw FieldPathError("'" + std::string(text) +
                           "' is not kafka:topic, kafka:partition, kafka:offset, kafka:timestamp, kafka:key or "
                           "kafka:value");
    }
    return input;
  }
  if (text.starts_with("header:")) {
    input.kind = InputName::Kind::header;
    input.header = std::string(text.substr(7));
    if (input.header.empty()) throw FieldPathError("'header:' needs a header name (header:trace-id)");
    return input;
  }
  if (text == "key") {
    input.kind = InputName::Kind::key;
    return input;
  }
  if (text.starts_with("key.")) {
    input.kind = InputName::Kind::key;
    input.path = parse_field_path(text.substr(4));
    return input;
  }
  input.kind = InputName::Kind::value;
  input.path = parse_field_path(text.starts_with("value.") ? text.substr(6) : text);
  return input;
}

}  // namespace hbingest::event_formats
