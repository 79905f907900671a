#pragma once
// One decoded message as its top-level fields: what every input format gives the one step that
// turns fields into an event (EventDecoder: type, time, TTL, cells) and the key spec (EventFields).
// docs/formats.md, "From fields to cells".
//
// Views (names, strings) stay valid until the format parses its next message.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hbingest/event_formats/field_path.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {

// Appends a scalar value as cell text, as Record::append_text writes the same value: strings as they
// are, integers in decimal, floats with ".0" when integral, true/false, nothing for null. A nested
// value appends nothing: only its record can write it (append_text_at).
void append_value_text(const keyspec::FieldValue& value, std::string& out);

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

  // Nested access (row mappings, key spec fields and templates naming "payment.amount", "items[0]").
  // The value at `path`: nullopt when any step is absent (a member missing, an index past the end, a
  // step into a scalar). Members of records, JSON objects and maps by name; arrays by index.
  // The base class answers top-level paths from the members above; formats override all three to walk.
  virtual std::optional<keyspec::FieldValue> at(const FieldPath& path) const;
  // Appends the value at `path` as cell text (append_text's rendering); false when absent.
  virtual bool append_text_at(const FieldPath& path, std::string& out) const;
  // Calls `visit` for each member of the record / object / map at `path` (an empty path: the top
  // level), in the message's order; false when there is no such record there. A nested record
  // becomes one family this way (a mapping `from: payment, to: "p:*"`).
  class MemberVisitor {
   public:
    virtual ~MemberVisitor() = default;
    // `append_text` appends this member's cell text to its argument.
    virtual void member(std::string_view name, const keyspec::FieldValue& value, bool is_null,
                        const std::function<void(std::string&)>& append_text) = 0;
  };
  virtual bool visit_members(const FieldPath& path, MemberVisitor& visit) const;

 private:
  // Index of the last member named `name` (JSON keeps the last of a repeated name), if any.
  std::optional<std::size_t> top_level_member(std::string_view name) const;
};

}  // namespace hbingest::event_formats
