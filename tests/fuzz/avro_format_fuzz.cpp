// libFuzzer target: Avro binary → the avro input format (decode.format: avro) over a fixed registry.
// Input: one byte choosing the schema id (1: every type and logical type, 2: records nested 60
// deep, 3: a recursive list, 4: an array of nulls and a map of empty records), then the Avro
// payload, framed here (the frame has its own unit tests).
// Properties: nothing crashes, hangs or allocates beyond the message (ASan's limits, -rss_limit_mb);
// a rejected payload is invalid_avro with the schema id in its message; an accepted one gives
// every member's name, value and cell text, field(name) agrees with member_value, a null member
// has no text, and a typed time is the member's integer value. Nested paths into it answer
// consistently (path_walk.h): through records, arrays, maps, unions, 31 levels of the deep records.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/format_factory.h"
#include "path_walk.h"

namespace {

using hbingest::connectors::RegisteredSchema;
using hbingest::connectors::SchemaType;

void check(bool ok) {
  if (!ok) std::abort();
}

// Equal values, a NaN equal to a NaN (a float or double field may hold one).
bool same(const hbingest::keyspec::FieldValue& a, const hbingest::keyspec::FieldValue& b) {
  const auto* x = std::get_if<double>(&a);
  const auto* y = std::get_if<double>(&b);
  if (x != nullptr && y != nullptr && std::isnan(*x) && std::isnan(*y)) return true;
  return a == b;
}

const char* const kEveryType = R"({"type":"record","name":"Order","namespace":"shop","fields":[
  {"name":"event_id","type":"string"},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
  {"name":"day","type":{"type":"int","logicalType":"date"}},
  {"name":"at","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
  {"name":"fee","type":{"type":"fixed","name":"Money","size":4,"logicalType":"decimal","precision":9,"scale":3}},
  {"name":"id","type":{"type":"string","logicalType":"uuid"}},
  {"name":"count","type":"int"},
  {"name":"total","type":"long"},
  {"name":"ratio","type":"float"},
  {"name":"price","type":"double"},
  {"name":"paid","type":"boolean"},
  {"name":"note","type":["null","string"]},
  {"name":"choice","type":["int","string","double"]},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
  {"name":"digest","type":{"type":"fixed","name":"Digest","size":2}},
  {"name":"blob","type":"bytes"},
  {"name":"address","type":{"type":"record","name":"Address","fields":[
    {"name":"city","type":"string"},{"name":"zip","type":["null","int"]},
    {"name":"geo","type":{"type":"array","items":"float"}}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"price","type":"double"},{"name":"status","type":"Status"},
    {"name":"raw","type":"bytes"},{"name":"seen","type":{"type":"long","logicalType":"timestamp-micros"}},
    {"name":"cost","type":"Money"},{"name":"wide","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":38}}]}}},
  {"name":"tags","type":{"type":"map","values":["null","string","Digest"]}}
]})";

const char* const kList = R"({"type":"record","name":"L","fields":[{"name":"head","type":["null",
  {"type":"record","name":"Node","fields":[{"name":"value","type":"long"},{"name":"next","type":["null","Node"]}]}]}]})";

const char* const kZeroBytes = R"({"type":"record","name":"Z","fields":[
  {"name":"nulls","type":{"type":"array","items":"null"}},
  {"name":"empties","type":{"type":"map","values":{"type":"record","name":"E","fields":[]}}},
  {"name":"nested","type":{"type":"array","items":{"type":"array","items":"E"}}}]})";

std::string deep_records(int depth) {
  std::string schema = R"("long")";
  for (int i = 0; i < depth; ++i) {
    schema = R"({"type":"record","name":"R)" + std::to_string(i) + R"(","fields":[{"name":"f","type":)" + schema +
             R"(},{"name":"g","type":["null","string"]}]})";
  }
  return schema;
}

class FixedRegistry final : public hbingest::connectors::SchemaRegistry {
 public:
  FixedRegistry() {
    schemas_[1] = kEveryType;
    schemas_[2] = deep_records(60);
    schemas_[3] = kList;
    schemas_[4] = kZeroBytes;
  }
  RegisteredSchema schema_by_id(std::int32_t id) override {
    const auto it = schemas_.find(id);
    if (it == schemas_.end()) throw hbingest::connectors::SchemaNotFound("no such id");
    return {id, SchemaType::avro, it->second, {}};
  }
  RegisteredSchema schema_by_subject_version(std::string_view, std::int32_t) override {
    throw hbingest::connectors::SchemaNotFound("no references here");
  }
  std::string describe() const override { return "fixed://registry"; }

 private:
  std::map<std::int32_t, std::string> schemas_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static FixedRegistry registry;
  static const auto format = hbingest::event_formats::make_input_format(hbingest::config::EventFormat::avro, &registry);
  const std::int32_t id = data[0] % 4 + 1;
  std::string message(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) message += static_cast<char>((id >> shift) & 0xFF);
  message.append(reinterpret_cast<const char*>(data) + 1, size - 1);

  if (const auto failure = format->parse(message)) {
    check(failure->kind == hbingest::event_formats::DecodeFailure::Kind::invalid);
    check(failure->reason == "invalid_avro");
    check(failure->schema_id == id);
    check(failure->message.find("schema id " + std::to_string(id)) != std::string::npos);
    return 0;
  }
  const auto& record = format->record();
  std::string text;
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    const auto name = record.member_name(i);
    const auto value = record.member_value(i);
    check(record.field(name) && same(*record.field(name), value));
    check(record.member_is_null(i) == std::holds_alternative<std::monostate>(value));
    text.clear();
    record.append_text(i, text);
    if (record.member_is_null(i)) check(text.empty());
    if (const auto time = record.typed_time_ms(name)) check(same(value, hbingest::keyspec::FieldValue{*time}));
  }
  static const std::vector<hbingest::event_formats::FieldPath> paths = [] {
    std::vector<hbingest::event_formats::FieldPath> out;
    std::string deep = "f";
    for (int i = 1; i < 31; ++i) deep += ".f";
    for (const std::string& path :
         {std::string("address.geo[0]"), std::string("address.zip"), std::string("items[1].cost"),
          std::string("items[0].seen"), std::string("items[4611686018427387904]"), std::string("tags.k"),
          std::string("choice"), std::string("note.x"), std::string("head.next.next.value"),
          std::string("head.next.next.next.next.next.next.next"), deep, deep + ".g", std::string("nested[0][0]"),
          std::string("empties.a"), std::string("nulls[3]")}) {
      out.push_back(hbingest::event_formats::parse_field_path(path));
    }
    return out;
  }();
  for (const auto& path : paths) hbingest::fuzz::walk_path(record, path);
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    hbingest::fuzz::walk_path(record, hbingest::event_formats::parse_field_path(record.member_name(i)));
  }
  return 0;
}
