#pragma once
// One JSON event as key spec fields: the one field view the daemon's decoder and `hbingest key
// build` share, so the CLI prints exactly the key the daemon writes. docs/keyspec.md, "Event fields".
//
// An event is one JSON object; its top-level members are its fields:
//   - strings, integers (int64), floats, booleans and null keep their type; an integer above int64
//     reads as a float;
//   - an object or array reads as NestedValue, which no component takes ("wrong type");
//   - a name given twice reads as its last value, as JSON.parse, Python's json and Jackson read it.
// Views (names, strings) point into the parsed document and stay valid until the next parse().
// Not thread-safe: one JsonEvent per thread (it reuses its parser buffers between events).

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hbingest/event_formats/record.h"

namespace hbingest::event_formats {

class JsonEvent final : public Record {
 public:
  struct ParseFailure {
    bool not_an_object = false;  // valid JSON, but not an object; else not valid JSON
    std::string message;         // "not valid JSON: <parser message>", "not a JSON object"
  };

  JsonEvent();
  ~JsonEvent() override;
  JsonEvent(const JsonEvent&) = delete;
  JsonEvent& operator=(const JsonEvent&) = delete;

  // Parses `json` (copied into the parser's reused buffer). On failure the event has no fields.
  std::optional<ParseFailure> parse(std::string_view json);

  std::optional<keyspec::FieldValue> field(std::string_view name) const override;

  // Every top-level member in document order, a repeated name as often as it is given.
  std::size_t member_count() const override;
  std::string_view member_name(std::size_t i) const override;
  keyspec::FieldValue member_value(std::size_t i) const override;
  bool member_is_null(std::size_t i) const override;  // member_value(i) is monostate, without making the value
  // Appends member i as text: strings as they are, integers in decimal (exact above int64 too),
  // floats as the shortest text that reads back to the same double with an integral one keeping
  // ".0" (410.0 stays "410.0", as Python and Java producers write it), true/false, nothing for
  // null, objects and arrays as minified JSON. The daemon's cells hold this text.
  void append_text(std::size_t i, std::string& out) const override;

  // Nested access: members of objects by name (the last of a repeated name), elements of arrays
  // by index; a value's text as append_text writes a member's. visit_members: every member of the
  // object at `path`, a repeated name as often as it is given.
  std::optional<keyspec::FieldValue> at(const FieldPath& path) const override;
  bool append_text_at(const FieldPath& path, std::string& out) const override;
  bool visit_members(const FieldPath& path, MemberVisitor& visit) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::event_formats
