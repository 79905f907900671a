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
    const Field& key = entry_table.fields[0];
    const Field& value = entry_table.fields[1];
    std::vector<MapEntry> entries;
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
    json_.start_object();
    bool first = true;
    std::string text;
    for (std::size_t n = 0; n < entries.size(); ++n) {
      if (n + 1 < entries.size() && equal(entries[n], entries[n + 1])) continue;  // the later one wins
      if (!std::exchange(first, false)) json_.comma();
      const MapEntry& e = entries[n];
      text.clear();
      switch (key.kind) {
        case Kind::string:
        case Kind::bytes:
          json_.key(e.text);
          break;
        case Kind::boolean:
          json_.key(e.signed_key != 0 ? "true" : "false");
          break;
        case Kind::uint32:
        case Kind::fixed32:
        case Kind::uint64:
        case Kind::fixed64:
          append_integer(e.unsigned_key, text);
          json_.key(text);
          break;
        default:
          append_integer(e.signed_key, text);
          json_.key(text);
          break;
      }
      element(value, e.value, depth);
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
