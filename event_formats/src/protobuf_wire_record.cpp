#include "protobuf_wire_record.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace hbingest::event_formats {

using keyspec::FieldValue;
using keyspec::NestedValue;
using pbwire::Field;
using pbwire::Item;
using pbwire::Kind;
using pbwire::Layout;
using pbwire::Shape;
using pbwire::Table;

namespace {

// The functions below read values as ProtobufRecord's namesakes do through reflection
// (protobuf_record.cpp): keep the two alike.

std::int64_t as_signed(const Field& field, std::uint64_t raw) {
  switch (field.kind) {
    case Kind::int32:
    case Kind::sfixed32:
    case Kind::enumeration:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
    case Kind::sint32: {
      const auto n = static_cast<std::uint32_t>(raw);
      return static_cast<std::int32_t>((n >> 1) ^ (~(n & 1) + 1));
    }
    case Kind::sint64:
      return static_cast<std::int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
    default:  // int64, sfixed64
      return static_cast<std::int64_t>(raw);
  }
}

std::uint64_t as_unsigned(const Field& field, std::uint64_t raw) {
  return field.kind == Kind::uint32 || field.kind == Kind::fixed32 ? static_cast<std::uint32_t>(raw) : raw;
}

// A float as the double its shortest text reads as (see protobuf_record.cpp).
double widened(float value) {
  char buffer[32];
  const char* end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
  double out = 0;
  std::from_chars(buffer, end, out);
  return out;
}

double as_double(const Field& field, std::uint64_t raw) {
  if (field.kind == Kind::float64) return std::bit_cast<double>(raw);
  return widened(std::bit_cast<float>(static_cast<std::uint32_t>(raw)));
}

std::string_view non_finite_name(double value) {
  if (std::isnan(value)) return "NaN";
  return value < 0 ? "-Infinity" : "Infinity";
}

// An enum's value name, empty when the enum has none of that number.
std::string_view enum_name(const Field& field, std::uint64_t raw) {
  const auto* value = field.descriptor->enum_type()->FindValueByNumber(static_cast<int>(as_signed(field, raw)));
  return value != nullptr ? std::string_view(value->name()) : std::string_view();
}

// Epoch ms of a Timestamp's bytes, rounded down, saturated (see protobuf_record.cpp).
std::int64_t timestamp_ms(const Table& timestamp, std::string_view bytes) {
  const int seconds_at = timestamp.find(1u);
  const int nanos_at = timestamp.find(2u);
  const Field& seconds_field = timestamp.fields[static_cast<std::size_t>(seconds_at)];
  const Field& nanos_field = timestamp.fields[static_cast<std::size_t>(nanos_at)];
  // One pass for both fields, the last of each winning.
  std::uint64_t seconds_raw = seconds_field.default_raw;
  std::uint64_t nanos_raw = nanos_field.default_raw;
  pbwire::Cursor in{bytes.data(), bytes.data() + bytes.size()};
  std::uint32_t tag = 0;
  Item item;
  while (!in.done() && in.tag(tag)) {
    const auto wire_type = static_cast<std::uint8_t>(tag & 7);
    if (!pbwire::read_value(in, wire_type, item)) break;
    if (wire_type != pbwire::varint) continue;
    if ((tag >> 3) == 1) seconds_raw = item.raw;
    if ((tag >> 3) == 2) nanos_raw = item.raw;
  }
  const std::int64_t seconds = as_signed(seconds_field, seconds_raw);
  const std::int64_t nanos = as_signed(nanos_field, nanos_raw);
  const std::int64_t nanos_ms = nanos >= 0 ? nanos / 1000000 : -((-nanos + 999999) / 1000000);
  std::int64_t ms = 0;
  if (__builtin_mul_overflow(seconds, 1000, &ms) || __builtin_add_overflow(ms, nanos_ms, &ms)) {
    return seconds < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  }
  return ms;
}

// A wrapper's value field and its value.
const Field& wrapped_field(const Field& field) { return field.nested->fields[0]; }
Item wrapped_item(const Field& field, const Item& item) { return pbwire::last_value(*field.nested, item.bytes, 0); }

// A map entry's key and value, for writing a map's entries in key order.
struct MapEntry {
  Item value;
  std::string_view text;        // string keys
  std::int64_t signed_key = 0;  // int32, int64, sint*, sfixed*, bool keys
  std::uint64_t unsigned_key = 0;
};

// The entries of map field `i` of a message in key order (numbers by value, strings bytewise), a
// key given twice once, with its last value (as ProtobufRecord's namesake).
void sorted_map_entries(const Table& table, std::string_view bytes, std::size_t i, std::vector<MapEntry>& entries) {
  const Table& entry_table = *table.fields[i].nested;
  const Field& key = entry_table.fields[0];
  entries.clear();
  pbwire::for_each_element(table, bytes, i, [&](const Item& entry) {
    const Item k = pbwire::last_value(entry_table, entry.bytes, 0);
    auto& e = entries.emplace_back(MapEntry{pbwire::last_value(entry_table, entry.bytes, 1), {}, 0, 0});
    switch (key.kind) {
      case Kind::string:
      case Kind::bytes:
        e.text = k.bytes;
        break;
      case Kind::boolean:
        e.signed_key = k.raw != 0 ? 1 : 0;
        break;
      case Kind::uint32:
      case Kind::fixed32:
      case Kind::uint64:
      case Kind::fixed64:
        e.unsigned_key = as_unsigned(key, k.raw);
        break;
      default:
        e.signed_key = as_signed(key, k.raw);
        break;
    }
  });
  const auto less = [](const MapEntry& a, const MapEntry& b) {
    return std::tie(a.text, a.signed_key, a.unsigned_key) < std::tie(b.text, b.signed_key, b.unsigned_key);
  };
  const auto equal = [&](const MapEntry& a, const MapEntry& b) { return !less(a, b) && !less(b, a); };
  std::stable_sort(entries.begin(), entries.end(), less);
  std::size_t kept = 0;  // of equal keys the later one wins: the last of each run stays
  for (std::size_t n = 0; n < entries.size(); ++n) {
    if (n + 1 < entries.size() && equal(entries[n], entries[n + 1])) continue;
    entries[kept++] = entries[n];
  }
  entries.resize(kept);
}

// A map entry's key as its JSON object's key; `buffer` holds a number's.
std::string_view map_key_text(const Field& key, const MapEntry& e, std::string& buffer) {
  buffer.clear();
  switch (key.kind) {
    case Kind::string:
    case Kind::bytes:
      return e.text;
    case Kind::boolean:
      return e.signed_key != 0 ? "true" : "false";
    case Kind::uint32:
    case Kind::fixed32:
    case Kind::uint64:
    case Kind::fixed64:
      append_integer(e.unsigned_key, buffer);
      return buffer;
    default:
      append_integer(e.signed_key, buffer);
      return buffer;
  }
}

// Whether a map key's wire value reads as `name` (its JSON object key), without making a string.
bool map_key_is(const Field& key, const Item& k, std::string_view name) {
  char buffer[24];
  const auto number = [&](auto value) {
    return name == std::string_view(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
  };
  switch (key.kind) {
    case Kind::string:
    case Kind::bytes:
      return k.bytes == name;
    case Kind::boolean:
      return name == (k.raw != 0 ? "true" : "false");
    case Kind::uint32:
    case Kind::fixed32:
    case Kind::uint64:
    case Kind::fixed64:
      return number(as_unsigned(key, k.raw));
    default:
      return number(as_signed(key, k.raw));
  }
}

// What writes nested values as compact JSON, as ProtobufRecord's NestedWriter does.
class NestedWriter {
 public:
  NestedWriter(CellTextFormatter& json, std::string& scratch, std::vector<std::unique_ptr<Layout>>& layouts)
      : json_(json), scratch_(scratch), layouts_(layouts) {}

  void message(const Table& table, std::string_view bytes, std::size_t depth) {
    if (table.in_number_order) {
      const std::size_t mark = json_.size();
      if (message_in_order(table, bytes, depth)) return;
      json_.truncate(mark);
    }
    while (layouts_.size() <= depth) layouts_.push_back(std::make_unique<Layout>());
    Layout& layout = *layouts_[depth];
    pbwire::scan(table, bytes, layout);
    json_.start_object();
    for (std::size_t i = 0; i < table.fields.size(); ++i) {
      json_.raw(std::string_view(table.fields[i].json_key).substr(i == 0 ? 1 : 0));
      field(table, bytes, layout, i, depth + 1);
    }
    json_.end_object();
  }

  // A message whose fields come as writers write them (in declaration order, which is number
  // order, each at most once, none unknown or of another wire type), in one pass over its bytes and
  // without a layout; false, having written part of it, for any other.
  bool message_in_order(const Table& table, std::string_view bytes, std::size_t depth) {
    pbwire::Cursor in{bytes.data(), bytes.data() + bytes.size()};
    std::uint32_t tag = 0;
    Item item;
    bool have = false;  // a field read and not yet written: tag, item
    const auto next = [&] {
      have = !in.done();
      return !have || (in.tag(tag) && pbwire::read_value(in, static_cast<std::uint8_t>(tag & 7), item));
    };
    if (!next()) return false;
    json_.start_object();
    for (std::size_t i = 0; i < table.fields.size(); ++i) {
      const Field& field = table.fields[i];
      json_.raw(std::string_view(field.json_key).substr(i == 0 ? 1 : 0));
      if (have && (tag >> 3) == field.number) {
        if ((tag & 7) != field.wire_type) return false;
        const Item value = item;
        if (!next() || (have && (tag >> 3) == field.number)) return false;  // given again: the last wins
        element(field, value, depth + 1);
      } else if (field.presence) {
        json_.null_atom();
      } else {
        element(field, pbwire::default_item(field), depth + 1);
      }
    }
    if (have) return false;  // a field out of order, unknown, or given again
    json_.end_object();
    return true;
  }

  // Field `i` of a message (its bytes and layout); `depth` is where messages in it go.
  void field(const Table& table, std::string_view bytes, const Layout& layout, std::size_t i, std::size_t depth) {
    const Field& field = table.fields[i];
    if (field.map) return map(table, bytes, i, depth);
    if (field.repeated) {
      json_.start_array();
      bool first = true;
      pbwire::for_each_element(table, bytes, i, [&](const Item& item) {
        if (!std::exchange(first, false)) json_.comma();
        element(field, item, depth);
      });
      return json_.end_array();
    }
    if (layout.present(table, i)) return element(field, layout.item(i), depth);
    if (field.presence) return json_.null_atom();
    element(field, pbwire::default_item(field), depth);
  }

  void element(const Field& field, const Item& item, std::size_t depth) {
    switch (field.kind) {
      case Kind::message:
        switch (field.shape) {
          case Shape::timestamp:
            return json_.number(timestamp_ms(*field.nested, item.bytes));
          case Shape::wrapper:
            return element(wrapped_field(field), wrapped_item(field, item), depth);
          case Shape::plain:
            return message(*field.nested, item.bytes, depth);
        }
        return;
      case Kind::string:
        return json_.string(item.bytes);
      case Kind::bytes:
        scratch_.clear();
        append_base64(item.bytes, scratch_);
        return json_.string(scratch_);
      case Kind::enumeration: {
        const std::string_view name = enum_name(field, item.raw);
        if (!name.empty()) return json_.string(name);
        return json_.number(as_signed(field, item.raw));
      }
      case Kind::uint64:
      case Kind::fixed64:
        return json_.number(item.raw);
      case Kind::uint32:
      case Kind::fixed32:
        return json_.number(static_cast<std::int64_t>(as_unsigned(field, item.raw)));
      case Kind::float32:
      case Kind::float64: {
        const double value = as_double(field, item.raw);
        if (std::isfinite(value)) return json_.number(value);
        return json_.string(non_finite_name(value));
      }
      case Kind::boolean:
        return item.raw != 0 ? json_.true_atom() : json_.false_atom();
      case Kind::group:  // never checked in: a message with one is read through libprotobuf
        return json_.null_atom();
      default:
        return json_.number(as_signed(field, item.raw));
    }
  }

  // A JSON object with the entries in key order (numbers by value, strings bytewise); a key given
  // twice, its last value.
  void map(const Table& table, std::string_view bytes, std::size_t i, std::size_t depth) {
    const Table& entry_table = *table.fields[i].nested;
    std::vector<MapEntry> entries;
    sorted_map_entries(table, bytes, i, entries);
    json_.start_object();
    std::string text;
    for (std::size_t n = 0; n < entries.size(); ++n) {
      if (n > 0) json_.comma();
      json_.key(map_key_text(entry_table.fields[0], entries[n], text));
      element(entry_table.fields[1], entries[n].value, depth);
    }
    json_.end_object();
  }

 private:
  CellTextFormatter& json_;
  std::string& scratch_;
  std::vector<std::unique_ptr<Layout>>& layouts_;
};

// A value as the key spec reads it; a wrapper's is its value's.
FieldValue element_value(const Field& field, const Item& item) {
  switch (field.kind) {
    case Kind::message:
      switch (field.shape) {
        case Shape::timestamp:
          return timestamp_ms(*field.nested, item.bytes);
        case Shape::wrapper:
          return element_value(wrapped_field(field), wrapped_item(field, item));
        case Shape::plain:
          return NestedValue{};
      }
      return NestedValue{};
    case Kind::string:
    case Kind::bytes:
      return item.bytes;
    case Kind::enumeration: {
      const std::string_view name = enum_name(field, item.raw);
      if (!name.empty()) return name;
      return as_signed(field, item.raw);
    }
    case Kind::uint32:
    case Kind::fixed32:
      return static_cast<std::int64_t>(as_unsigned(field, item.raw));
    case Kind::uint64:
    case Kind::fixed64:
      // Above int64 a number reads as a double, as JSON's does.
      if (item.raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<double>(item.raw);
      return static_cast<std::int64_t>(item.raw);
    case Kind::float32:
    case Kind::float64: {
      const double value = as_double(field, item.raw);
      if (std::isfinite(value)) return value;
      return non_finite_name(value);
    }
    case Kind::boolean:
      return item.raw != 0;
    case Kind::group:
      return std::monostate{};
    default:
      return as_signed(field, item.raw);
  }
}

// A value as a cell's text; nested messages through `nested`, which writes to `json`.
void append_element_text(const Field& field, const Item& item, NestedWriter& nested, CellTextFormatter& json,
                         std::string& out) {
  switch (field.kind) {
    case Kind::message:
      switch (field.shape) {
        case Shape::timestamp:
          return append_integer(timestamp_ms(*field.nested, item.bytes), out);
        case Shape::wrapper:
          return append_element_text(wrapped_field(field), wrapped_item(field, item), nested, json, out);
        case Shape::plain:
          json.clear();
          nested.message(*field.nested, item.bytes, 0);
          out.append(json.str());
          return;
      }
      return;
    case Kind::string:
    case Kind::bytes:  // a cell holds them as they are
      out.append(item.bytes);
      return;
    case Kind::enumeration: {
      const std::string_view name = enum_name(field, item.raw);
      if (!name.empty()) {
        out.append(name);
      } else {
        append_integer(as_signed(field, item.raw), out);
      }
      return;
    }
    case Kind::uint32:
    case Kind::fixed32:
    case Kind::uint64:
    case Kind::fixed64:
      return append_integer(as_unsigned(field, item.raw), out);
    case Kind::float32:
    case Kind::float64: {
      const double value = as_double(field, item.raw);
      if (std::isfinite(value)) {
        append_double(value, out);
      } else {
        out.append(non_finite_name(value));
      }
      return;
    }
    case Kind::boolean:
      out.append(item.raw != 0 ? "true" : "false");
      return;
    case Kind::group:
      return;
    default:
      return append_integer(as_signed(field, item.raw), out);
  }
}

}  // namespace

void ProtobufWireRecord::reset(const Table& table, std::string_view bytes) {
  timestamp_at_ = nullptr;
  table_ = &table;
  bytes_ = bytes;
}

void ProtobufWireRecord::release_buffers() {
  json_.emplace();
  std::string().swap(scratch_);  // (assigning an empty string would keep the capacity)
  std::vector<std::unique_ptr<Layout>>().swap(nested_);
}

void ProtobufWireRecord::no_member(std::size_t i) const {
  throw std::out_of_range("protobuf record: no member " + std::to_string(i));
}

std::string_view ProtobufWireRecord::member_name(std::size_t i) const { return member(i).name; }
FieldValue ProtobufWireRecord::member_value(std::size_t i) const {
  member(i);
  return value_of(i);
}
bool ProtobufWireRecord::member_is_null(std::size_t i) const {
  member(i);
  return is_null(i);
}

std::optional<FieldValue> ProtobufWireRecord::field(std::string_view name) const {
  if (table_ == nullptr) return std::nullopt;
  const int i = table_->find(name);
  if (i < 0) return std::nullopt;
  return value_of(static_cast<std::size_t>(i));
}

bool ProtobufWireRecord::is_null(std::size_t i) const {
  const Field& field = table_->fields[i];
  return !field.repeated && field.presence && !layout_.present(*table_, i);
}

std::int64_t ProtobufWireRecord::timestamp_ms(const Field& field, const Item& item) const {
  if (timestamp_at_ != item.bytes.data() || timestamp_at_ == nullptr) {
    timestamp_ms_ = event_formats::timestamp_ms(*field.nested, item.bytes);
    timestamp_at_ = item.bytes.data();
  }
  return timestamp_ms_;
}

FieldValue ProtobufWireRecord::value_of(std::size_t i) const {
  const Field& field = table_->fields[i];
  if (field.repeated) return NestedValue{};
  if (is_null(i)) return std::monostate{};
  const Item item = layout_.value(*table_, i);
  if (field.kind == Kind::message && field.shape == Shape::timestamp) return timestamp_ms(field, item);
  return element_value(field, item);
}

void ProtobufWireRecord::append_text(std::size_t i, std::string& out) const {
  const Field& field = member(i);
  NestedWriter nested(*json_, scratch_, nested_);
  if (field.repeated) {
    json_->clear();
    // From where the field was first given: what comes before holds none of it.
    const char* first = layout_.first(i);
    const std::string_view from =
        first != nullptr ? bytes_.substr(static_cast<std::size_t>(first - bytes_.data())) : std::string_view();
    nested.field(*table_, from, layout_, i, 0);
    out.append(json_->str());
    return;
  }
  if (is_null(i)) return;
  const Item item = layout_.value(*table_, i);
  if (field.kind == Kind::message && field.shape == Shape::timestamp)
    return append_integer(timestamp_ms(field, item), out);
  append_element_text(field, item, nested, *json_, out);
}

namespace {

// Field `index` of a checked message whose singular fields `layout` holds, as a path position.
ProtobufWireRecord::Position position_of(const Table& table, std::string_view bytes, const Layout& layout,
                                         std::size_t index) {
  const Field& field = table.fields[index];
  if (field.repeated) return {&table, index, bytes, {}, ProtobufWireRecord::Position::whole};
  if (layout.present(table, index))
    return {&table, index, bytes, layout.item(index), ProtobufWireRecord::Position::element};
  if (field.presence) return {&table, index, bytes, {}, ProtobufWireRecord::Position::null};
  return {&table, index, bytes, pbwire::default_item(field), ProtobufWireRecord::Position::element};
}

// The table of a plain message at `at` to step into (a Timestamp or wrapper reads as a scalar),
// nullptr for any other value.
const Table* plain_message(const ProtobufWireRecord::Position& at) {
  if (at.what != ProtobufWireRecord::Position::element) return nullptr;
  const Field& field = at.table->fields[at.index];
  return field.kind == Kind::message && field.shape == Shape::plain ? field.nested : nullptr;
}

}  // namespace

// The same steps as ProtobufRecord::walk takes through reflection, over the bytes: a nested
// message's fields are found by a scan of its bytes into path_layout_.
std::optional<ProtobufWireRecord::Position> ProtobufWireRecord::walk(const FieldPath& path) const {
  if (table_ == nullptr || path.steps.empty() || path.steps.front().index) return std::nullopt;
  const int first = table_->find(std::string_view(path.steps.front().name));
  if (first < 0) return std::nullopt;
  Position at = position_of(*table_, bytes_, layout_, static_cast<std::size_t>(first));
  for (std::size_t s = 1; s < path.steps.size(); ++s) {
    const PathStep& step = path.steps[s];
    if (at.what == Position::null) return std::nullopt;
    const Field& field = at.table->fields[at.index];
    if (at.what == Position::whole && field.map) {
      if (step.index) return std::nullopt;
      const Table& entry_table = *field.nested;
      std::optional<Item> found;
      pbwire::for_each_element(*at.table, at.bytes, at.index, [&](const Item& entry) {
        // The last of a repeated key wins; a map's value is never null (an entry without one holds the default).
        if (map_key_is(entry_table.fields[0], pbwire::last_value(entry_table, entry.bytes, 0), step.name)) {
          found = pbwire::last_value(entry_table, entry.bytes, 1);
        }
      });
      if (!found) return std::nullopt;
      at = Position{&entry_table, 1, {}, *found, Position::element};
    } else if (at.what == Position::whole) {
      if (!step.index) return std::nullopt;
      std::size_t left = *step.index;
      std::optional<Item> found;
      pbwire::for_each_element(*at.table, at.bytes, at.index, [&](const Item& item) {
        if (!found && left-- == 0) found = item;
      });
      if (!found) return std::nullopt;
      at.item = *found;
      at.what = Position::element;
    } else {
      const Table* nested = plain_message(at);
      if (nested == nullptr || step.index) return std::nullopt;
      const int index = nested->find(std::string_view(step.name));
      if (index < 0) return std::nullopt;
      const std::string_view bytes = at.item.bytes;
      pbwire::scan(*nested, bytes, path_layout_);
      at = position_of(*nested, bytes, path_layout_, static_cast<std::size_t>(index));
    }
  }
  return at;
}

FieldValue ProtobufWireRecord::value_at(const Position& at) const {
  switch (at.what) {
    case Position::null:
      return std::monostate{};
    case Position::whole:
      return NestedValue{};
    case Position::element:
      break;
  }
  return element_value(at.table->fields[at.index], at.item);
}

void ProtobufWireRecord::append_text_of(const Position& at, std::string& out) const {
  if (at.what == Position::null) return;
  NestedWriter nested(*json_, scratch_, nested_);
  if (at.what == Position::whole) {
    json_->clear();
    nested.field(*at.table, at.bytes, layout_, at.index, 0);  // (a layout only singular fields read)
    out.append(json_->str());
    return;
  }
  append_element_text(at.table->fields[at.index], at.item, nested, *json_, out);
}

std::optional<FieldValue> ProtobufWireRecord::at(const FieldPath& path) const {
  if (path.is_top_level()) return field(path.steps.front().name);
  const auto position = walk(path);
  if (!position) return std::nullopt;
  return value_at(*position);
}

bool ProtobufWireRecord::append_text_at(const FieldPath& path, std::string& out) const {
  if (path.is_top_level()) {
    if (table_ == nullptr) return false;
    const int i = table_->find(std::string_view(path.steps.front().name));
    if (i < 0) return false;
    append_text(static_cast<std::size_t>(i), out);
    return true;
  }
  const auto position = walk(path);
  if (!position) return false;
  append_text_of(*position, out);
  return true;
}

bool ProtobufWireRecord::visit_members(const FieldPath& path, MemberVisitor& visit) const {
  if (path.steps.empty()) return Record::visit_members(path, visit);
  const auto position = walk(path);
  if (!position) return false;
  const auto member = [&](std::string_view name, const Position& at) {
    visit.member(name, value_at(at), at.what == Position::null, [&](std::string& out) { append_text_of(at, out); });
  };
  if (const Table* nested = plain_message(*position)) {
    // Its own layout: the members' text is written with nested_'s.
    Layout& layout = path_layout_;
    pbwire::scan(*nested, position->item.bytes, layout);
    for (std::size_t i = 0; i < nested->fields.size(); ++i) {
      member(nested->fields[i].name, position_of(*nested, position->item.bytes, layout, i));
    }
    return true;
  }
  const Field& field = position->table->fields[position->index];
  if (position->what != Position::whole || !field.map) return false;
  std::vector<MapEntry> entries;
  sorted_map_entries(*position->table, position->bytes, position->index, entries);
  std::string key;
  for (const MapEntry& e : entries) {
    member(map_key_text(field.nested->fields[0], e, key), Position{field.nested, 1, {}, e.value, Position::element});
  }
  return true;
}

std::optional<std::int64_t> ProtobufWireRecord::typed_time_ms(std::string_view name) const {
  if (table_ == nullptr) return std::nullopt;
  const int i = table_->find(name);
  if (i < 0) return std::nullopt;
  const Field& field = table_->fields[static_cast<std::size_t>(i)];
  if (field.repeated || field.kind != Kind::message || field.shape != Shape::timestamp ||
      !layout_.present(*table_, static_cast<std::size_t>(i))) {
    return std::nullopt;
  }
  return timestamp_ms(field, layout_.value(*table_, static_cast<std::size_t>(i)));
}

}  // namespace hbingest::event_formats
