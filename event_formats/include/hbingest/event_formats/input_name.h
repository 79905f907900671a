#pragma once
// The one grammar of input names (docs/rows.md, "Inputs"): what a row mapping's `from:`, a key spec's
// `field:` and a table template's ${field:...} may name.
//   payment.amount, items[0].sku   a path into the message value (field_path.h)
//   value.PATH                     the same, explicitly (a value field named `key` or `value`)
//   key, key.PATH                  the Kafka message key, decoded by its key format; a field of it
//   header:NAME                    a Kafka header's value (the last one of that name)
//   kafka:topic|partition|offset|timestamp|key|value   metadata; the key's and value's raw bytes

#include <optional>
#include <string>
#include <string_view>

#include "hbingest/event_formats/field_path.h"

namespace hbingest::event_formats {

struct InputName {
  enum class Kind {
    value,  // path into the value
    key,    // the whole decoded key (path empty) or a path into it
    header,
    kafka_topic,
    kafka_partition,
    kafka_offset,
    kafka_timestamp,
    kafka_key,    // the key's bytes as received
    kafka_value,  // the value's bytes as received
  };
  Kind kind = Kind::value;
  std::optional<FieldPath> path;  // value: always; key: when a field of it is named
  std::string header;             // header: its name
  bool reads_value() const { return kind == Kind::value || kind == Kind::kafka_value; }
};

// Throws FieldPathError (an std::invalid_argument) naming what is wrong.
InputName parse_input_name(std::string_view text);

}  // namespace hbingest::event_formats
