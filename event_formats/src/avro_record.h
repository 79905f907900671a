#pragma once
// One Avro message as a Record: the top-level fields of its writer schema's record, in schema
// order, read where they are in the message (the format's copy of it: strings and bytes are views
// into it), after check_binary found each field and checked every length, count and index.
// The values and their cell text: docs/formats.md, "Avro"; the text is what JsonEvent gives for
// the event's JSON twin.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "avro_binary_check.h"
#include "avro_schema.h"
#include "cell_text.h"
#include "hbingest/event_formats/record.h"

namespace hbingest::event_formats::avro {

class AvroRecord final : public Record {
 public:
  // Reads a message of `schema` whose fields check_binary found (views the message and `fields`
  // until clear() or the next view()).
  void view(std::shared_ptr<const Schema> schema, const std::vector<FieldBytes>& fields);
  void clear();
  // Gives back the buffers append_text grew (they grow with the largest nested value).
  void release_buffers();

  std::optional<keyspec::FieldValue> field(std::string_view name) const override;
  std::size_t member_count() const override { return members_.size(); }
  std::string_view member_name(std::size_t i) const override;
  keyspec::FieldValue member_value(std::size_t i) const override;
  bool member_is_null(std::size_t i) const override;
  void append_text(std::size_t i, std::string& out) const override;
  std::optional<std::int64_t> typed_time_ms(std::string_view name) const override;

  // Nested access: records' fields by name, maps' values by key (the last of a key written twice),
  // arrays' items by index, a union as its branch; values and text as members' (a nested decimal
  // as its text, a timestamp-micros as ms). visit_members: a record's fields in schema order or a
  // map's entries in the order written.
  std::optional<keyspec::FieldValue> at(const FieldPath& path) const override;
  bool append_text_at(const FieldPath& path, std::string& out) const override;
  bool visit_members(const FieldPath& path, MemberVisitor& visit) const override;

 private:
  // A value in the message and its type (never a union once resolved()).
  struct Position {
    const Node* node;
    const char* at;
  };
  static Position resolved(Position position);
  std::optional<Position> walk(const FieldPath& path) const;
  keyspec::FieldValue value_of(Position position, std::string_view decimal) const;
  void append_value_text(Position position, std::string_view decimal, std::string& out) const;
  // A nested decimal's text, kept until the next message (a value views it); empty for others.
  std::string_view decimal_at(Position position) const;
  struct Member {
    const Node* node = nullptr;  // never a union: check_binary gave the branch
    std::string_view bytes;      // the value in the message
    std::string decimal;         // a decimal's text (member_value views it); capacity kept between messages
  };
  std::optional<std::size_t> index_of(std::string_view name) const;
  void append_json(const char*& at, const Node& node) const;

  std::shared_ptr<const Schema> schema_;
  std::vector<Member> members_;  // capacity kept between messages
  // append_text's writer of nested values and its scratch for bytes and decimals: buffers kept.
  mutable CellTextFormatter formatter_;
  mutable std::string scratch_;
  // Nested decimals' text that values view: one string each, reused from one message to the next.
  mutable std::vector<std::unique_ptr<std::string>> decimals_;
  mutable std::size_t decimals_used_ = 0;
  mutable std::string scratch_decimal_;  // append_text_at's
};

}  // namespace hbingest::event_formats::avro
