#pragma once
// What a row mapping (`from:`), a key spec field and a table template (`${field:...}`) name: one
// grammar for every input of a Kafka message (docs/rows.md, "Inputs").
//
//   payment.amount, items[0].sku   a path into the message value (field_path.h)
//   value.<path>                   the same, explicit: a value field named "key", or with ':' in its name
//   key                            the message key, read by its topic's key format (decode.key_format)
//   key.<path>                     a field of the decoded key (json, avro, protobuf, json_schema keys)
//   header:<name>                  the value of the last header of that name
//   kafka:topic|partition|offset|timestamp|key|value   metadata, and the key's and value's raw bytes
//
// A bare "value" is the value field named "value" (nothing else is whole-value but kafka:value).

#include <string>
#include <string_view>

#include "hbingest/event_formats/field_path.h"

namespace hbingest::event_formats {

enum class InputSource { value, key, header, kafka };
enum class KafkaInput { topic, partition, offset, timestamp, key, value };

struct InputName {
  InputSource source = InputSource::value;
  // value: the path into the value; key: the path into the decoded key, no steps for the whole key.
  FieldPath path;
  std::string header;                    // header: its name
  KafkaInput kafka = KafkaInput::topic;  // kafka: which
  std::string text;                      // as written, for messages

  // Whether reading it needs the decoded key (key, key.<path>), or anything of the value (a value
  // path, kafka:value): a route computing a delete's row key from a tombstone may read neither of
  // the value's.
  bool reads_decoded_key() const { return source == InputSource::key; }
  bool reads_value() const {
    return source == InputSource::value || (source == InputSource::kafka && kafka == KafkaInput::value);
  }
};

// Throws FieldPathError naming the byte position and what was expected.
InputName parse_input_name(std::string_view text);

}  // namespace hbingest::event_formats
