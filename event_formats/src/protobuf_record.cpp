#include "protobuf_record.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "protobuf_wire_table.h"

namespace hbingest::event_formats {

namespace pb = google::protobuf;
using keyspec::FieldValue;
using keyspec::NestedValue;
using FD = pb::FieldDescriptor;

namespace {

// Timestamp and the wrappers, which read as a value, known as the in-place reading knows them
// (reading a field through reflection as a type it is not aborts: shape_of checks their shape).
using pbwire::Shape;
using pbwire::shape_of;

// Epoch ms of a Timestamp, rounded down (-1 ns is -1 ms); saturated at the ends of int64 ms, whose
// instants no event has (EventDecoder refuses times outside 1970..9999).
std::int64_t timestamp_ms(const pb::Message& timestamp) {
  const pb::Reflection& reflection = *timestamp.GetReflection();
  const pb::Descriptor& type = *timestamp.GetDescriptor();
  const std::int64_t seconds = reflection.GetInt64(timestamp, type.FindFieldByNumber(1));
  const std::int64_t nanos = reflection.GetInt32(timestamp, type.FindFieldByNumber(2));
  const std::int64_t nanos_ms = nanos >= 0 ? nanos / 1000000 : -((-nanos + 999999) / 1000000);
  std::int64_t ms = 0;
  if (__builtin_mul_overflow(seconds, 1000, &ms) || __builtin_add_overflow(ms, nanos_ms, &ms)) {
    return seconds < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  }
  return ms;
}

// A float as the double its shortest text reads as: 1.1f reads 1.1 (not 1.100000023841858), as a
// JSON twin of the event holds it (protobuf's JSON printer and Python write floats so).
double widened(float value) {
  char buffer[32];
  const char* end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
  double out = 0;
  std::from_chars(buffer, end, out);
  return out;
}

// NaN and the infinities, which JSON has no number for, read and render as the strings protobuf's
// JSON printer writes for them.
std::string_view non_finite_name(double value) {
  if (std::isnan(value)) return "NaN";
  return value < 0 ? "-Infinity" : "Infinity";
}

// One value of a field: the singular value (index -1) or the index-th of a repeated field.
struct Slot {
  const pb::Message& message;
  const FD& field;
  int index;

  const pb::Reflection& reflection() const { return *message.GetReflection(); }
  std::int64_t int32() const {
    return index < 0 ? reflection().GetInt32(message, &field) : reflection().GetRepeatedInt32(message, &field, index);
  }
  std::int64_t int64() const {
    return index < 0 ? reflection().GetInt64(message, &field) : reflection().GetRepeatedInt64(message, &field, index);
  }
  std::int64_t uint32() const {
    return index < 0 ? reflection().GetUInt32(message, &field) : reflection().GetRepeatedUInt32(message, &field, index);
  }
  std::uint64_t uint64() const {
    return index < 0 ? reflection().GetUInt64(message, &field) : reflection().GetRepeatedUInt64(message, &field, index);
  }
  double float64() const {
    return index < 0 ? reflection().GetDouble(message, &field) : reflection().GetRepeatedDouble(message, &field, index);
  }
  float float32() const {
    return index < 0 ? reflection().GetFloat(message, &field) : reflection().GetRepeatedFloat(message, &field, index);
  }
  bool boolean() const {
    return index < 0 ? reflection().GetBool(message, &field) : reflection().GetRepeatedBool(message, &field, index);
  }
  int enum_number() const {
    return index < 0 ? reflection().GetEnumValue(message, &field)
                     : reflection().GetRepeatedEnumValue(message, &field, index);
  }
  const std::string& string(std::string& scratch) const {
    return index < 0 ? reflection().GetStringReference(message, &field, &scratch)
                     : reflection().GetRepeatedStringReference(message, &field, index, &scratch);
  }
  const pb::Message& sub_message() const {
    return index < 0 ? reflection().GetMessage(message, &field)
                     : reflection().GetRepeatedMessage(message, &field, index);
  }
  // A wrapper's value.
  static Slot inner(const pb::Message& wrapper) { return {wrapper, *wrapper.GetDescriptor()->field(0), -1}; }
};

// A map entry and its key, for writing a map's entries in key order.
struct MapEntry {
  const pb::Message* entry;
  std::string text;             // string keys
  std::int64_t signed_key = 0;  // int32, int64, sint*, sfixed*, bool keys
  std::uint64_t unsigned_key = 0;
};

// The entries of map `field` in key order (numbers by value, strings bytewise), a key given twice
// once, with its last value.
void sorted_map_entries(const pb::Message& message, const FD& field, std::vector<MapEntry>& entries) {
  const pb::Reflection& reflection = *message.GetReflection();
  const FD& key = *field.message_type()->map_key();
  const int size = reflection.FieldSize(message, &field);
  entries.clear();
  entries.reserve(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    const pb::Message& entry = reflection.GetRepeatedMessage(message, &field, i);
    auto& e = entries.emplace_back(MapEntry{&entry, {}, 0, 0});
    const Slot k{entry, key, -1};
    switch (key.cpp_type()) {
      case FD::CPPTYPE_STRING: {
        std::string copy;
        e.text = k.string(copy);
        break;
      }
      case FD::CPPTYPE_INT32:
        e.signed_key = k.int32();
        break;
      case FD::CPPTYPE_INT64:
        e.signed_key = k.int64();
        break;
      case FD::CPPTYPE_UINT32:
        e.unsigned_key = static_cast<std::uint64_t>(k.uint32());
        break;
      case FD::CPPTYPE_UINT64:
        e.unsigned_key = k.uint64();
        break;
      case FD::CPPTYPE_BOOL:
        e.signed_key = k.boolean() ? 1 : 0;
        break;
      default:  // protobuf allows no other key type
        break;
    }
  }
  const auto less = [](const MapEntry& a, const MapEntry& b) {
    return std::tie(a.text, a.signed_key, a.unsigned_key) < std::tie(b.text, b.signed_key, b.unsigned_key);
  };
  const auto equal = [&](const MapEntry& a, const MapEntry& b) { return !less(a, b) && !less(b, a); };
  std::stable_sort(entries.begin(), entries.end(), less);
  // Of equal keys the later one wins: the last of each run stays.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && equal(entries[i], entries[i + 1])) continue;
    if (kept != i) entries[kept] = std::move(entries[i]);  // (a string moved onto itself would be lost)
    ++kept;
  }
  entries.resize(kept);
}

// A map entry's key as the key of its JSON object ("true", "-3", the string); `buffer` holds a number's.
std::string_view map_key_text(const FD& map, const MapEntry& e, std::string& buffer) {
  const FD& key = *map.message_type()->map_key();
  buffer.clear();
  switch (key.cpp_type()) {
    case FD::CPPTYPE_STRING:
      return e.text;
    case FD::CPPTYPE_BOOL:
      return e.signed_key != 0 ? "true" : "false";
    case FD::CPPTYPE_UINT32:
    case FD::CPPTYPE_UINT64:
      append_integer(e.unsigned_key, buffer);
      return buffer;
    default:
      append_integer(e.signed_key, buffer);
      return buffer;
  }
}

// Whether a map entry's key reads as `name` (its JSON object key), without making a string.
bool map_key_is(const pb::Message& entry, const FD& key, std::string_view name) {
  const Slot k{entry, key, -1};
  char buffer[24];
  const auto number = [&](auto value) {
    return name == std::string_view(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
  };
  switch (key.cpp_type()) {
    case FD::CPPTYPE_STRING: {
      std::string copy;
      return k.string(copy) == name;
    }
    case FD::CPPTYPE_BOOL:
      return name == (k.boolean() ? "true" : "false");
    case FD::CPPTYPE_INT32:
      return number(k.int32());
    case FD::CPPTYPE_INT64:
      return number(k.int64());
    case FD::CPPTYPE_UINT32:
      return number(k.uint32());
    case FD::CPPTYPE_UINT64:
      return number(k.uint64());
    default:
      return false;
  }
}

// What writes nested values: a message, repeated field or map as compact JSON.
class NestedWriter {
 public:
  NestedWriter(CellTextFormatter& json, std::string& scratch) : json_(json), scratch_(scratch) {}

  void message(const pb::Message& message) {
    const pb::Descriptor& type = *message.GetDescriptor();
    json_.start_object();
    for (int i = 0; i < type.field_count(); ++i) {
      if (i > 0) json_.comma();
      json_.key(type.field(i)->name());
      field(message, *type.field(i));
    }
    json_.end_object();
  }

  void field(const pb::Message& message, const FD& field) {
    const pb::Reflection& reflection = *message.GetReflection();
    if (field.is_map()) return map(message, field);
    if (field.is_repeated()) {
      json_.start_array();
      const int size = reflection.FieldSize(message, &field);
      for (int i = 0; i < size; ++i) {
        if (i > 0) json_.comma();
        element({message, field, i});
      }
      return json_.end_array();
    }
    if (field.has_presence() && !reflection.HasField(message, &field)) return json_.null_atom();
    element({message, field, -1});
  }

  void element(const Slot& slot) {
    switch (slot.field.cpp_type()) {
      case FD::CPPTYPE_MESSAGE: {
        const pb::Message& sub = slot.sub_message();
        switch (shape_of(*sub.GetDescriptor())) {
          case Shape::timestamp:
            return json_.number(timestamp_ms(sub));
          case Shape::wrapper:
            return element(Slot::inner(sub));
          case Shape::plain:
            return message(sub);
        }
        return;
      }
      case FD::CPPTYPE_STRING: {
        std::string copy;
        const std::string& bytes = slot.string(copy);
        if (slot.field.type() != FD::TYPE_BYTES) return json_.string(bytes);
        scratch_.clear();
        append_base64(bytes, scratch_);
        return json_.string(scratch_);
      }
      case FD::CPPTYPE_ENUM: {
        const int number = slot.enum_number();
        if (const auto* value = slot.field.enum_type()->FindValueByNumber(number)) return json_.string(value->name());
        return json_.number(static_cast<std::int64_t>(number));
      }
      case FD::CPPTYPE_INT32:
        return json_.number(slot.int32());
      case FD::CPPTYPE_INT64:
        return json_.number(slot.int64());
      case FD::CPPTYPE_UINT32:
        return json_.number(slot.uint32());
      case FD::CPPTYPE_UINT64:
        return json_.number(slot.uint64());
      case FD::CPPTYPE_DOUBLE:
      case FD::CPPTYPE_FLOAT: {
        const double value = slot.field.cpp_type() == FD::CPPTYPE_DOUBLE ? slot.float64() : widened(slot.float32());
        if (std::isfinite(value)) return json_.number(value);
        return json_.string(non_finite_name(value));
      }
      case FD::CPPTYPE_BOOL:
        return slot.boolean() ? json_.true_atom() : json_.false_atom();
    }
  }

  // A JSON object with the entries in key order (numbers by value, strings bytewise), so the text
  // of the same map is the same whatever order it came in; a key given twice, its last value.
  void map(const pb::Message& message, const FD& field) {
    const FD& value = *field.message_type()->map_value();
    std::vector<MapEntry> entries;
    sorted_map_entries(message, field, entries);
    json_.start_object();
    std::string text;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) json_.comma();
      json_.key(map_key_text(field, entries[i], text));
      element({*entries[i].entry, value, -1});
    }
    json_.end_object();
  }

 private:
  CellTextFormatter& json_;
  std::string& scratch_;  // a bytes value's base64
};

// A value as the key spec reads it; a wrapper's is its value's. Strings reflection gives only as a
// copy are kept in `copies`.
FieldValue element_value(const Slot& slot, std::deque<std::string>& copies) {
  switch (slot.field.cpp_type()) {
    case FD::CPPTYPE_MESSAGE: {
      const pb::Message& sub = slot.sub_message();
      switch (shape_of(*sub.GetDescriptor())) {
        case Shape::timestamp:
          return timestamp_ms(sub);
        case Shape::wrapper:
          return element_value(Slot::inner(sub), copies);
        case Shape::plain:
          return NestedValue{};
      }
      return NestedValue{};
    }
    case FD::CPPTYPE_STRING: {
      std::string copy;
      const std::string& text = slot.string(copy);
      if (&text != &copy) return std::string_view(text);
      return std::string_view(copies.emplace_back(std::move(copy)));
    }
    case FD::CPPTYPE_ENUM: {
      const int number = slot.enum_number();
      if (const auto* value = slot.field.enum_type()->FindValueByNumber(number)) return std::string_view(value->name());
      return std::int64_t{number};
    }
    case FD::CPPTYPE_INT32:
      return slot.int32();
    case FD::CPPTYPE_INT64:
      return slot.int64();
    case FD::CPPTYPE_UINT32:
      return slot.uint32();
    case FD::CPPTYPE_UINT64: {
      const std::uint64_t value = slot.uint64();
      // Above int64 a number reads as a double, as JSON's does.
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<double>(value);
      return static_cast<std::int64_t>(value);
    }
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      const double value = slot.field.cpp_type() == FD::CPPTYPE_DOUBLE ? slot.float64() : widened(slot.float32());
      if (std::isfinite(value)) return value;
      return non_finite_name(value);
    }
    case FD::CPPTYPE_BOOL:
      return slot.boolean();
  }
  return std::monostate{};
}

// A value as a cell's text (append_text); nested messages through `nested`, which writes to `json`.
void append_element_text(const Slot& slot, NestedWriter& nested, CellTextFormatter& json, std::string& out) {
  switch (slot.field.cpp_type()) {
    case FD::CPPTYPE_MESSAGE: {
      const pb::Message& sub = slot.sub_message();
      switch (shape_of(*sub.GetDescriptor())) {
        case Shape::timestamp:
          return append_integer(timestamp_ms(sub), out);
        case Shape::wrapper:
          return append_element_text(Slot::inner(sub), nested, json, out);
        case Shape::plain:
          json.clear();
          nested.message(sub);
          out.append(json.str());
          return;
      }
      return;
    }
    case FD::CPPTYPE_STRING: {  // bytes too: a cell holds them as they are
      std::string copy;
      out.append(slot.string(copy));
      return;
    }
    case FD::CPPTYPE_ENUM: {
      const int number = slot.enum_number();
      if (const auto* value = slot.field.enum_type()->FindValueByNumber(number)) {
        out.append(value->name());
      } else {
        append_integer(number, out);
      }
      return;
    }
    case FD::CPPTYPE_INT32:
      return append_integer(slot.int32(), out);
    case FD::CPPTYPE_INT64:
      return append_integer(slot.int64(), out);
    case FD::CPPTYPE_UINT32:
      return append_integer(slot.uint32(), out);
    case FD::CPPTYPE_UINT64:
      return append_integer(slot.uint64(), out);
    case FD::CPPTYPE_DOUBLE:
    case FD::CPPTYPE_FLOAT: {
      const double value = slot.field.cpp_type() == FD::CPPTYPE_DOUBLE ? slot.float64() : widened(slot.float32());
      if (std::isfinite(value)) {
        append_double(value, out);
      } else {
        out.append(non_finite_name(value));
      }
      return;
    }
    case FD::CPPTYPE_BOOL:
      out.append(slot.boolean() ? "true" : "false");
      return;
  }
}

}  // namespace

void ProtobufRecord::reset(const pb::Message* message) {
  message_ = message;
  type_ = message != nullptr ? message->GetDescriptor() : nullptr;
  reflection_ = message != nullptr ? message->GetReflection() : nullptr;
  copies_.clear();
}

void ProtobufRecord::release_buffers() {
  json_.emplace();
  std::string().swap(scratch_);  // (assigning an empty string would keep the capacity)
  std::deque<std::string>().swap(copies_);
}

const FD& ProtobufRecord::member(std::size_t i) const {
  if (i >= member_count()) throw std::out_of_range("protobuf record: no member " + std::to_string(i));
  return *type_->field(static_cast<int>(i));
}

std::size_t ProtobufRecord::member_count() const {
  return type_ != nullptr ? static_cast<std::size_t>(type_->field_count()) : 0;
}
std::string_view ProtobufRecord::member_name(std::size_t i) const { return member(i).name(); }
FieldValue ProtobufRecord::member_value(std::size_t i) const { return value_of(member(i)); }
bool ProtobufRecord::member_is_null(std::size_t i) const { return is_null(member(i)); }

std::optional<FieldValue> ProtobufRecord::field(std::string_view name) const {
  if (type_ == nullptr) return std::nullopt;
  const FD* field = type_->FindFieldByName(std::string(name));
  if (field == nullptr) return std::nullopt;
  return value_of(*field);
}

bool ProtobufRecord::is_null(const FD& field) const {
  return !field.is_repeated() && field.has_presence() && !reflection_->HasField(*message_, &field);
}

FieldValue ProtobufRecord::value_of(const FD& field) const {
  if (field.is_repeated()) return NestedValue{};
  if (is_null(field)) return std::monostate{};
  return element_value({*message_, field, -1}, copies_);
}

void ProtobufRecord::append_text(std::size_t i, std::string& out) const {
  const FD& field = member(i);
  NestedWriter nested(*json_, scratch_);
  if (field.is_repeated()) {
    json_->clear();
    nested.field(*message_, field);
    out.append(json_->str());
    return;
  }
  if (is_null(field)) return;
  append_element_text({*message_, field, -1}, nested, *json_, out);
}

namespace {

// A message field's value as a message to step into: a plain one (a Timestamp or wrapper reads as
// a scalar), nullptr for any other.
const pb::Message* plain_message(const ProtobufRecord::Position& at) {
  if (at.null || at.field->cpp_type() != FD::CPPTYPE_MESSAGE || (at.field->is_repeated() && at.index < 0)) {
    return nullptr;
  }
  const pb::Message& sub = Slot{*at.message, *at.field, at.index}.sub_message();
  return shape_of(*sub.GetDescriptor()) == Shape::plain ? &sub : nullptr;
}

// Field `field` of `message` as a path position: a repeated field or map whole, a singular field
// with presence that is unset as null.
ProtobufRecord::Position position_of(const pb::Message& message, const FD& field) {
  const bool null = !field.is_repeated() && field.has_presence() && !message.GetReflection()->HasField(message, &field);
  return {&message, &field, -1, null};
}

}  // namespace

std::optional<ProtobufRecord::Position> ProtobufRecord::walk(const FieldPath& path) const {
  if (type_ == nullptr || path.steps.empty() || path.steps.front().index) return std::nullopt;
  const FD* first = type_->FindFieldByName(path.steps.front().name);
  if (first == nullptr) return std::nullopt;
  Position at = position_of(*message_, *first);
  for (std::size_t s = 1; s < path.steps.size(); ++s) {
    const PathStep& step = path.steps[s];
    const FD& field = *at.field;
    const bool whole = field.is_repeated() && at.index < 0;
    if (at.null) return std::nullopt;
    if (whole && field.is_map()) {
      if (step.index) return std::nullopt;
      const FD& key = *field.message_type()->map_key();
      const FD& value = *field.message_type()->map_value();
      const pb::Reflection& reflection = *at.message->GetReflection();
      const int size = reflection.FieldSize(*at.message, &field);
      std::optional<Position> found;
      for (int i = 0; i < size; ++i) {  // the last of a repeated key wins
        const pb::Message& entry = reflection.GetRepeatedMessage(*at.message, &field, i);
        // A map's value is never null: an entry without one holds the default, as its text shows.
        if (map_key_is(entry, key, step.name)) found = Position{&entry, &value, -1, false};
      }
      if (!found) return std::nullopt;
      at = *found;
    } else if (whole) {
      if (!step.index ||
          *step.index >= static_cast<std::size_t>(at.message->GetReflection()->FieldSize(*at.message, &field))) {
        return std::nullopt;
      }
      at.index = static_cast<int>(*step.index);
    } else {
      const pb::Message* sub = plain_message(at);
      if (sub == nullptr || step.index) return std::nullopt;
      const FD* next = sub->GetDescriptor()->FindFieldByName(step.name);
      if (next == nullptr) return std::nullopt;
      at = position_of(*sub, *next);
    }
  }
  return at;
}

FieldValue ProtobufRecord::value_at(const Position& at) const {
  if (at.null) return std::monostate{};
  if (at.field->is_repeated() && at.index < 0) return NestedValue{};
  return element_value({*at.message, *at.field, at.index}, copies_);
}

void ProtobufRecord::append_text_of(const Position& at, std::string& out) const {
  if (at.null) return;
  NestedWriter nested(*json_, scratch_);
  if (at.field->is_repeated() && at.index < 0) {
    json_->clear();
    nested.field(*at.message, *at.field);
    out.append(json_->str());
    return;
  }
  append_element_text({*at.message, *at.field, at.index}, nested, *json_, out);
}

std::optional<FieldValue> ProtobufRecord::at(const FieldPath& path) const {
  if (path.is_top_level()) {  // field(name) without its copy of the name
    const FD* top = type_ != nullptr ? type_->FindFieldByName(path.steps.front().name) : nullptr;
    if (top == nullptr) return std::nullopt;
    return value_of(*top);
  }
  const auto position = walk(path);
  if (!position) return std::nullopt;
  return value_at(*position);
}

bool ProtobufRecord::append_text_at(const FieldPath& path, std::string& out) const {
  const auto position = walk(path);
  if (!position) return false;
  append_text_of(*position, out);
  return true;
}

bool ProtobufRecord::visit_members(const FieldPath& path, MemberVisitor& visit) const {
  if (path.steps.empty()) return Record::visit_members(path, visit);
  const auto position = walk(path);
  if (!position) return false;
  const auto member = [&](std::string_view name, const Position& at) {
    visit.member(name, value_at(at), at.null, [&](std::string& out) { append_text_of(at, out); });
  };
  if (const pb::Message* sub = plain_message(*position)) {
    const pb::Descriptor& type = *sub->GetDescriptor();
    for (int i = 0; i < type.field_count(); ++i) member(type.field(i)->name(), position_of(*sub, *type.field(i)));
    return true;
  }
  const FD& field = *position->field;
  if (position->null || !field.is_map() || position->index >= 0) return false;
  std::vector<MapEntry> entries;
  sorted_map_entries(*position->message, field, entries);
  std::string key;
  for (const MapEntry& e : entries) {
    member(map_key_text(field, e, key), Position{e.entry, field.message_type()->map_value(), -1, false});
  }
  return true;
}

std::optional<std::int64_t> ProtobufRecord::typed_time_ms(std::string_view name) const {
  if (type_ == nullptr) return std::nullopt;
  const FD* field = type_->FindFieldByName(std::string(name));
  if (field == nullptr || field->is_repeated() || field->cpp_type() != FD::CPPTYPE_MESSAGE ||
      !reflection_->HasField(*message_, field)) {
    return std::nullopt;
  }
  const pb::Message& sub = reflection_->GetMessage(*message_, field);
  if (shape_of(*sub.GetDescriptor()) != Shape::timestamp) return std::nullopt;
  return timestamp_ms(sub);
}

}  // namespace hbingest::event_formats
