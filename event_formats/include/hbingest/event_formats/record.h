#pragma once
// One decoded message as its top-level fields: what every input format gives the one step that
// turns fields into an event (EventDecoder: type, time, TTL, cells) and the key spec (EventFields).
// docs/formats.md, "From fields to cells".
//
// Views (names, strings) stay valid until the format parses its next message.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {

class Record : public keyspec::EventFields {
 public:
  // The top-level fields in the order the message gives them (a JSON name given twice, twice).
  virtual std::size_t member_count() const = 0;
  virtual std::string_view member_name(std::size_t i) const = 0;
  // As the key spec reads it: strings, int64, double, bool, null (monostate) or NestedValue for
  // records, maps, arrays and JSON objects. A typed timestamp reads as int64 epoch ms.
  virtual keyspec::FieldValue member_value(std::size_t i) const = 0;
  virtual bool member_is_null(std::size_t i) const = 0;
  // Appends member i as the text a cell holds, the same for the same event in every format:
  // strings as they are, numbers as JSON writes them (a float with ".0" when integral), true/false,
  // nothing for null, nested values as compact JSON, typed timestamps as epoch ms, bytes as they are.
  virtual void append_text(std::size_t i, std::string& out) const = 0;
  // When field `name` is a typed timestamp (Avro timestamp-millis/-micros, google.protobuf.Timestamp):
  // its instant in epoch ms, which is the event time whatever decode.time_format says.
  virtual std::optional<std::int64_t> typed_time_ms(std::string_view /*name*/) const { return std::nullopt; }
};

}  // namespace hbingest::event_formats
