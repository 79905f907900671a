#pragma once
// One Protobuf message as a Record, read from its wire bytes in place (protobuf_wire.h) after
// Checker::check accepted them: the same members, values and cell text as ProtobufRecord reads
// through libprotobuf's reflection (protobuf_record.h, which says what presence and nesting read
// as), at a fraction of the cost. Nested messages are read when rendered, from their bytes.
//
// Views (names, strings, bytes) stay valid while the payload and the schema do: until the format
// parses its next message. Not thread-safe.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cell_text.h"
#include "hbingest/event_formats/record.h"
#include "protobuf_wire.h"

namespace hbingest::event_formats {

class ProtobufWireRecord final : public Record {
 public:
  // The layout Checker::check fills for the message reset() views next.
  pbwire::Layout& layout() { return layout_; }
  // Views the checked message `bytes` of `table`'s type, its layout().
  void reset(const pbwire::Table& table, std::string_view bytes);
  // Views no message: a record with no fields.
  void clear() {
    timestamp_at_ = nullptr;
    table_ = nullptr;
    bytes_ = {};
  }
  // Gives back the buffers nested text grew to (after a large message: they only grow otherwise).
  void release_buffers();

  std::optional<keyspec::FieldValue> field(std::string_view name) const override;
  std::size_t member_count() const override { return table_ != nullptr ? table_->fields.size() : 0; }
  std::string_view member_name(std::size_t i) const override;
  keyspec::FieldValue member_value(std::size_t i) const override;
  bool member_is_null(std::size_t i) const override;
  void append_text(std::size_t i, std::string& out) const override;
  std::optional<std::int64_t> typed_time_ms(std::string_view name) const override;

  // Nested access, as ProtobufRecord answers it (protobuf_record.h), read from the bytes.
  std::optional<keyspec::FieldValue> at(const FieldPath& path) const override;
  bool append_text_at(const FieldPath& path, std::string& out) const override;
  bool visit_members(const FieldPath& path, MemberVisitor& visit) const override;

  // A value in the message: field `index` of `table`'s message whose bytes are `bytes`: one value
  // (`item`), the repeated field or map whole, or null (a field with presence that is unset).
  // (Public for the helpers in the .cpp's anonymous namespace that make them.)
  struct Position {
    const pbwire::Table* table;
    std::size_t index;
    std::string_view bytes;
    pbwire::Item item;
    enum What { element, whole, null } what;
  };

 private:
  std::optional<Position> walk(const FieldPath& path) const;
  keyspec::FieldValue value_at(const Position& at) const;
  void append_text_of(const Position& at, std::string& out) const;
  const pbwire::Field& member(std::size_t i) const {
    if (i >= member_count()) [[unlikely]]
      no_member(i);
    return table_->fields[i];
  }
  [[noreturn]] void no_member(std::size_t i) const;
  keyspec::FieldValue value_of(std::size_t i) const;
  bool is_null(std::size_t i) const;

  // A top-level Timestamp's ms, read by the decoder up to three times (its time, its value, its
  // cell text): the one last read, by where its bytes are (nullptr: none).
  std::int64_t timestamp_ms(const pbwire::Field& field, const pbwire::Item& item) const;
  mutable const char* timestamp_at_ = nullptr;
  mutable std::int64_t timestamp_ms_ = 0;

  const pbwire::Table* table_ = nullptr;
  std::string_view bytes_;
  pbwire::Layout layout_;
  // Nested messages' layouts while their text is written, one per depth (each its own
  // allocation: a deeper one added keeps the shallower ones where they are).
  mutable std::vector<std::unique_ptr<pbwire::Layout>> nested_;
  // As ProtobufRecord's: nested values' text and nested bytes' base64, their buffers kept.
  mutable std::optional<CellTextFormatter> json_{std::in_place};
  mutable std::string scratch_;
  // The layout of the nested message a walk steps through, or visit_members lists (kept, so
  // that neither allocates once it has grown to the widest message).
  mutable pbwire::Layout path_layout_;
};

}  // namespace hbingest::event_formats
