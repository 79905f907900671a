#pragma once
// One decoded Protobuf message as a Record: its top-level fields in declaration order, read through
// reflection (docs/formats.md, "Protobuf", for what each type reads and renders as).
//
// Presence: a proto3 singular scalar without presence is always present, its default value when
// the message does not carry it (as a JSON twin written with every field); a field with presence
// (proto2 optional, proto3 `optional`, a message, a oneof member) that is unset is null; a repeated
// field or map is always present, [] or {} when empty.
//
// Nested values are written by recursion as deep as the message nests, which parsing bounds
// (protobuf's recursion limit, 100). Views (names, strings, bytes) stay valid while the message is
// unchanged: until the format parses its next message. Not thread-safe.

#include <google/protobuf/message.h>

#include <deque>
#include <optional>
#include <string>

#include "cell_text.h"
#include "hbingest/event_formats/record.h"

namespace hbingest::event_formats {

class ProtobufRecord final : public Record {
 public:
  // Views `message` (nullptr: a record with no fields).
  void reset(const google::protobuf::Message* message);
  // Gives back the buffers nested text grew to (after a large message: they only grow otherwise).
  void release_buffers();

  std::optional<keyspec::FieldValue> field(std::string_view name) const override;
  std::size_t member_count() const override;
  std::string_view member_name(std::size_t i) const override;
  keyspec::FieldValue member_value(std::size_t i) const override;
  bool member_is_null(std::size_t i) const override;
  void append_text(std::size_t i, std::string& out) const override;
  std::optional<std::int64_t> typed_time_ms(std::string_view name) const override;

  // Nested access: a message's fields by name, a repeated field's elements by index, a map's values
  // by key (as its JSON object's key: "7", "true", the string; the last of a key given twice);
  // Timestamps and wrappers are values, not messages to step into. Values and text as members'.
  // visit_members: a message's fields in declaration order, or a map's entries in key order.
  std::optional<keyspec::FieldValue> at(const FieldPath& path) const override;
  bool append_text_at(const FieldPath& path, std::string& out) const override;
  bool visit_members(const FieldPath& path, MemberVisitor& visit) const override;

  // A value in the message: `field` of `message`, its index-th element (index -1: the singular
  // value, or a repeated field or map whole); null: a field with presence that is unset. (Public
  // for the helpers in the .cpp's anonymous namespace that make them.)
  struct Position {
    const google::protobuf::Message* message;
    const google::protobuf::FieldDescriptor* field;
    int index;
    bool null;
  };

 private:
  std::optional<Position> walk(const FieldPath& path) const;
  keyspec::FieldValue value_at(const Position& at) const;
  void append_text_of(const Position& at, std::string& out) const;
  const google::protobuf::FieldDescriptor& member(std::size_t i) const;
  keyspec::FieldValue value_of(const google::protobuf::FieldDescriptor& field) const;
  bool is_null(const google::protobuf::FieldDescriptor& field) const;

  const google::protobuf::Message* message_ = nullptr;
  const google::protobuf::Descriptor* type_ = nullptr;
  const google::protobuf::Reflection* reflection_ = nullptr;
  // Strings reflection could give only as a copy (not the case of dynamic messages today), kept
  // until reset() so their views stay valid.
  mutable std::deque<std::string> copies_;
  // Nested values' text, its buffer kept between values. An optional, so that release_buffers()
  // makes a new one: assigning one with an empty buffer would keep the old buffer's capacity.
  mutable std::optional<CellTextFormatter> json_{std::in_place};
  mutable std::string scratch_;  // nested bytes' base64
};

}  // namespace hbingest::event_formats
