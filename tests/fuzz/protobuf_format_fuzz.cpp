// libFuzzer target: a Confluent-framed Protobuf value → the protobuf format (decode.format: protobuf)
// → every member's value and cell text, over a fixed registry holding one rich schema twice: as
// .proto text (id 1) and as base64 of its serialized FileDescriptorProto (id 2), as Apicurio gives it.
// Input: what follows the schema id in a frame: the message indexes, then the payload.
// Properties: nothing crashes or throws; a refused value has a reason and a message; an accepted one
// is accepted from both forms of the schema, with the same members, values and text; a null
// member's text is empty; field(name) is member_value of that name. And the format's reading of
// the wire bytes in place (protobuf_wire.h) agrees with its reference, libprotobuf's dynamic message
// read through reflection, on every input: the same refusal (reason and message) or the same
// members, values, text, typed times and answers to nested paths (messages, repeated fields, maps
// by key, oneofs, Timestamps and wrappers as values), each consistent with itself (path_walk.h).
// Hostile schemas too: an input beginning with 'T' (which as message indexes would be a negative
// count, refused) is .proto text, then a 0 byte, then a payload of its first message; one beginning
// with 'S' is a 2-byte big-endian length, that many bytes of a serialized FileDescriptorProto
// (given to the format in base64), then such a payload. Either schema may import legacy.proto.
#include <openssl/evp.h>
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_schema_registry.h"
#include "formats.h"
#include "hbingest/event_formats/format_factory.h"
#include "path_walk.h"

namespace {

using hbingest::connectors::RegisteredSchema;
using hbingest::connectors::SchemaType;
using hbingest::event_formats::InputFormat;

void check(bool ok) {
  if (!ok) std::abort();
}

// Every field type, presence kind and nesting the format reads, a recursive type, and proto2's
// required fields, groups and defaults in an imported file (a reference).
constexpr const char* kRich = R"(syntax = "proto3";
package fuzz;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "legacy.proto";

enum Kind { KIND_UNKNOWN = 0; A = 1; B = 2; }

message Event {
  message Item { string sku = 1; sint64 qty = 2; double price = 3; bytes code = 4; Kind kind = 5; }
  message Node { Node child = 1; repeated Node kids = 2; string name = 3; map<string, Node> named = 4; }
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  int32 i32 = 3; int64 i64 = 4; uint32 u32 = 5; uint64 u64 = 6; sint32 s32 = 7; sint64 s64 = 8;
  fixed32 f32 = 9; fixed64 f64 = 10; sfixed32 sf32 = 11; sfixed64 sf64 = 12;
  float fl = 13; double db = 14; bool ok = 15; string text = 16; bytes raw = 17; Kind kind = 18;
  Item item = 19; repeated Item items = 20; repeated int64 packed = 21; repeated string tags = 22;
  map<string, Item> by_sku = 23; map<int64, string> by_id = 24; map<bool, double> by_flag = 25;
  optional string note = 26;
  oneof choice { string card = 27; int64 voucher = 28; Item gift = 29; }
  google.protobuf.StringValue sv = 30; google.protobuf.Int64Value iv = 31; google.protobuf.BytesValue bv = 32;
  google.protobuf.FloatValue fv = 33; google.protobuf.UInt64Value uv = 34; google.protobuf.BoolValue bov = 35;
  repeated google.protobuf.Timestamp times = 36; repeated Kind kinds = 37;
  Node tree = 38;
  legacy.Old old = 39;
}
)";

constexpr const char* kLegacy = R"(syntax = "proto2";
package legacy;
message Old {
  required string id = 1;
  optional int32 n = 2 [default = 7];
  repeated group Part = 3 { optional string p = 4; }
  optional Old next = 5;
}
)";

// Base64 of the serialized FileDescriptorProto of kRich, as protoc makes it: with kRich in
// rich.proto and kLegacy in legacy.proto, `protoc -I. -I/usr/include --descriptor_set_out=rich.desc
// rich.proto`, then the one file of that FileDescriptorSet (its bytes after the leading tag and length).
constexpr const char* kRichDescriptorBase64 =
    "CgpyaWNoLnByb3RvEgRmdXp6Gh9nb29nbGUvcHJvdG9idWYvdGltZXN0YW1wLnByb3RvGh5nb29nbGUvcHJvdG9idWYvd3JhcHBl"
    "cnMucHJvdG8aDGxlZ2FjeS5wcm90byLTDQoFRXZlbnQSGQoIZXZlbnRfaWQYASABKAlSB2V2ZW50SWQSKgoCdHMYAiABKAsyGi5n"
    "b29nbGUucHJvdG9idWYuVGltZXN0YW1wUgJ0cxIQCgNpMzIYAyABKAVSA2kzMhIQCgNpNjQYBCABKANSA2k2NBIQCgN1MzIYBSAB"
    "KA1SA3UzMhIQCgN1NjQYBiABKARSA3U2NBIQCgNzMzIYByABKBFSA3MzMhIQCgNzNjQYCCABKBJSA3M2NBIQCgNmMzIYCSABKAdS"
    "A2YzMhIQCgNmNjQYCiABKAZSA2Y2NBISCgRzZjMyGAsgASgPUgRzZjMyEhIKBHNmNjQYDCABKBBSBHNmNjQSDgoCZmwYDSABKAJS"
    "AmZsEg4KAmRiGA4gASgBUgJkYhIOCgJvaxgPIAEoCFICb2sSEgoEdGV4dBgQIAEoCVIEdGV4dBIQCgNyYXcYESABKAxSA3JhdxIe"
    "CgRraW5kGBIgASgOMgouZnV6ei5LaW5kUgRraW5kEiQKBGl0ZW0YEyABKAsyEC5mdXp6LkV2ZW50Lkl0ZW1SBGl0ZW0SJgoFaXRl"
    "bXMYFCADKAsyEC5mdXp6LkV2ZW50Lkl0ZW1SBWl0ZW1zEhYKBnBhY2tlZBgVIAMoA1IGcGFja2VkEhIKBHRhZ3MYFiADKAlSBHRh"
    "Z3MSLQoGYnlfc2t1GBcgAygLMhYuZnV6ei5FdmVudC5CeVNrdUVudHJ5UgVieVNrdRIqCgVieV9pZBgYIAMoCzIVLmZ1enouRXZl"
    "bnQuQnlJZEVudHJ5UgRieUlkEjAKB2J5X2ZsYWcYGSADKAsyFy5mdXp6LkV2ZW50LkJ5RmxhZ0VudHJ5UgZieUZsYWcSFwoEbm90"
    "ZRgaIAEoCUgBUgRub3RliAEBEhQKBGNhcmQYGyABKAlIAFIEY2FyZBIaCgd2b3VjaGVyGBwgASgDSABSB3ZvdWNoZXISJgoEZ2lm"
    "dBgdIAEoCzIQLmZ1enouRXZlbnQuSXRlbUgAUgRnaWZ0EiwKAnN2GB4gASgLMhwuZ29vZ2xlLnByb3RvYnVmLlN0cmluZ1ZhbHVl"
    "UgJzdhIrCgJpdhgfIAEoCzIbLmdvb2dsZS5wcm90b2J1Zi5JbnQ2NFZhbHVlUgJpdhIrCgJidhggIAEoCzIbLmdvb2dsZS5wcm90"
    "b2J1Zi5CeXRlc1ZhbHVlUgJidhIrCgJmdhghIAEoCzIbLmdvb2dsZS5wcm90b2J1Zi5GbG9hdFZhbHVlUgJmdhIsCgJ1dhgiIAEo"
    "CzIcLmdvb2dsZS5wcm90b2J1Zi5VSW50NjRWYWx1ZVICdXYSLAoDYm92GCMgASgLMhouZ29vZ2xlLnByb3RvYnVmLkJvb2xWYWx1"
    "ZVIDYm92EjAKBXRpbWVzGCQgAygLMhouZ29vZ2xlLnByb3RvYnVmLlRpbWVzdGFtcFIFdGltZXMSIAoFa2luZHMYJSADKA4yCi5m"
    "dXp6LktpbmRSBWtpbmRzEiQKBHRyZWUYJiABKAsyEC5mdXp6LkV2ZW50Lk5vZGVSBHRyZWUSHQoDb2xkGCcgASgLMgsubGVnYWN5"
    "Lk9sZFIDb2xkGnQKBEl0ZW0SEAoDc2t1GAEgASgJUgNza3USEAoDcXR5GAIgASgSUgNxdHkSFAoFcHJpY2UYAyABKAFSBXByaWNl"
    "EhIKBGNvZGUYBCABKAxSBGNvZGUSHgoEa2luZBgFIAEoDjIKLmZ1enouS2luZFIEa2luZBrnAQoETm9kZRImCgVjaGlsZBgBIAEo"
    "CzIQLmZ1enouRXZlbnQuTm9kZVIFY2hpbGQSJAoEa2lkcxgCIAMoCzIQLmZ1enouRXZlbnQuTm9kZVIEa2lkcxISCgRuYW1lGAMg"
    "ASgJUgRuYW1lEjEKBW5hbWVkGAQgAygLMhsuZnV6ei5FdmVudC5Ob2RlLk5hbWVkRW50cnlSBW5hbWVkGkoKCk5hbWVkRW50cnkS"
    "EAoDa2V5GAEgASgJUgNrZXkSJgoFdmFsdWUYAiABKAsyEC5mdXp6LkV2ZW50Lk5vZGVSBXZhbHVlOgI4ARpKCgpCeVNrdUVudHJ5"
    "EhAKA2tleRgBIAEoCVIDa2V5EiYKBXZhbHVlGAIgASgLMhAuZnV6ei5FdmVudC5JdGVtUgV2YWx1ZToCOAEaNwoJQnlJZEVudHJ5"
    "EhAKA2tleRgBIAEoA1IDa2V5EhQKBXZhbHVlGAIgASgJUgV2YWx1ZToCOAEaOQoLQnlGbGFnRW50cnkSEAoDa2V5GAEgASgIUgNr"
    "ZXkSFAoFdmFsdWUYAiABKAFSBXZhbHVlOgI4AUIICgZjaG9pY2VCBwoFX25vdGUqJgoES2luZBIQCgxLSU5EX1VOS05PV04QABIF"
    "CgFBEAESBQoBQhACYgZwcm90bzM=";

hbingest::testing::FakeSchemaRegistry& registry() {
  static auto* fake = [] {
    auto* r = new hbingest::testing::FakeSchemaRegistry();
    const std::vector<hbingest::connectors::SchemaReference> references{{"legacy.proto", "legacy", 1}};
    r->add_version("legacy", 1, RegisteredSchema{0, SchemaType::protobuf, kLegacy, {}});
    r->add(RegisteredSchema{1, SchemaType::protobuf, kRich, references});
    r->add(RegisteredSchema{2, SchemaType::protobuf, kRichDescriptorBase64, references});
    // kRich without legacy.Old: a type that can lack a required field is read through libprotobuf
    // only, so Event is read in place from this one alone.
    std::string proto3_only = kRich;
    for (const std::string_view line : {"import \"legacy.proto\";\n", "  legacy.Old old = 39;\n"}) {
      proto3_only.erase(proto3_only.find(line), line.size());
    }
    r->add(RegisteredSchema{4, SchemaType::protobuf, proto3_only, {}});
    return r;
  }();
  return *fake;
}

struct Member {
  std::string name;
  std::string value;  // the FieldValue's index and, for scalars, its text
  std::string text;
  bool null;
};

// A FieldValue as text that tells every value apart (a double by its bits: NaN is not NaN).
std::string value_text(const hbingest::keyspec::FieldValue& value) {
  std::string out = std::to_string(value.index()) + ":";
  if (const auto* s = std::get_if<std::string_view>(&value)) out += std::string(*s);
  if (const auto* n = std::get_if<std::int64_t>(&value)) out += std::to_string(*n);
  if (const auto* d = std::get_if<double>(&value)) out += std::to_string(std::bit_cast<std::uint64_t>(*d));
  if (const auto* b = std::get_if<bool>(&value)) out += *b ? "true" : "false";
  return out;
}

// Reads every member of the format's record, checking it against itself on the way.
std::vector<Member> members(const InputFormat& format) {
  const auto& record = format.record();
  std::vector<Member> out;
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    Member m;
    m.name = record.member_name(i);
    const auto value = record.member_value(i);
    m.null = record.member_is_null(i);
    check(m.null == std::holds_alternative<std::monostate>(value));
    m.value = value_text(value);
    record.append_text(i, m.text);
    if (m.null) check(m.text.empty());
    const auto by_name = record.field(m.name);
    check(by_name.has_value() && *by_name == value);
    out.push_back(std::move(m));
  }
  // Nested paths, as members too (both readings must agree), each walked a prefix at a time.
  static const std::vector<hbingest::event_formats::FieldPath> paths = [] {
    std::vector<hbingest::event_formats::FieldPath> out;
    for (const char* path : {"item.sku",
                             "item.kind",
                             "items[0].qty",
                             "items[1].code",
                             "items[4611686018427387904]",
                             "packed[2]",
                             "tags[0]",
                             "by_sku.a.price",
                             "by_id.1",
                             "by_id.-1",
                             "by_flag.true",
                             "by_flag.false",
                             "gift.sku",
                             "card",
                             "sv",
                             "iv.value",
                             "times[0]",
                             "ts.seconds",
                             "tree.child.child.name",
                             "tree.kids[1].named.a.kids[0].name",
                             "tree.named.x.child",
                             "old.next.n",
                             "old.Part[0]",
                             "note.x"}) {
      out.push_back(hbingest::event_formats::parse_field_path(path));
    }
    return out;
  }();
  for (const auto& path : paths) {
    hbingest::fuzz::walk_path(record, path);
    Member m{"path " + path.text, "absent", {}, false};
    if (const auto value = record.at(path)) {
      m.value = value_text(*value);
      m.null = std::holds_alternative<std::monostate>(*value);
    }
    check(record.append_text_at(path, m.text) == (m.value != "absent"));
    out.push_back(std::move(m));
  }
  // The typed times, as members too, so that both readings must agree on them.
  for (const char* name : {"ts", "event_id", "no_such_field"}) {
    const auto ms = record.typed_time_ms(name);
    out.push_back(Member{std::string("typed_time_ms ") + name, ms ? std::to_string(*ms) : "none", {}, false});
  }
  return out;
}

// Both readings of the same payload: the same refusal, or the same members.
void check_same(const std::optional<hbingest::event_formats::DecodeFailure>& fast, const InputFormat& fast_format,
                const std::optional<hbingest::event_formats::DecodeFailure>& reference,
                const InputFormat& reference_format) {
  // The schema cache waits for the registry only a moment (schema_cache.h): on a loaded machine a
  // schema parsed under ASan can take longer, and that format's answer is "unavailable for now".
  // That is timing, not reading.
  const auto unavailable = [](const auto& failure) {
    return failure && failure->kind == hbingest::event_formats::DecodeFailure::Kind::unavailable;
  };
  if (unavailable(fast) || unavailable(reference)) return;
  if (fast.has_value() != reference.has_value() ||
      (fast && (fast->reason != reference->reason || fast->message != reference->message))) {
    std::fprintf(stderr, "in place: %s\nreference: %s\n", fast ? (fast->reason + ": " + fast->message).c_str() : "read",
                 reference ? (reference->reason + ": " + reference->message).c_str() : "read");
    std::abort();
  }
  if (fast) return;
  const auto a = members(fast_format);
  const auto b = members(reference_format);
  check(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    check(a[i].name == b[i].name && a[i].value == b[i].value && a[i].text == b[i].text && a[i].null == b[i].null);
  }
}

std::unique_ptr<InputFormat> reference_format(hbingest::connectors::SchemaRegistry& r) {
  return hbingest::event_formats::make_protobuf_format(r, {},
                                                       hbingest::event_formats::ProtobufReading::through_libprotobuf);
}

// A fuzzed schema (as the registry would give it) and a payload of its first message, through a new
// format: the schema must be refused as bad_schema or read.
void fuzz_schema(std::string schema_text, std::string_view payload) {
  hbingest::testing::FakeSchemaRegistry fresh;
  fresh.add_version("legacy", 1, RegisteredSchema{0, SchemaType::protobuf, kLegacy, {}});
  fresh.add(RegisteredSchema{3, SchemaType::protobuf, std::move(schema_text), {{"legacy.proto", "legacy", 1}}});
  const auto format = hbingest::event_formats::make_input_format(hbingest::config::EventFormat::protobuf, &fresh);
  const auto framed = hbingest::testing::confluent_framed(3, std::string(1, '\0') + std::string(payload));
  const auto failure = format->parse(framed);
  const auto reference = reference_format(fresh);
  check_same(failure, *format, reference->parse(framed), *reference);
  if (failure) {
    check(!failure->reason.empty() && !failure->message.empty());
    if (failure->kind == hbingest::event_formats::DecodeFailure::Kind::unavailable) return;  // (timing, as above)
    check(failure->kind == hbingest::event_formats::DecodeFailure::Kind::invalid);
    return;
  }
  (void)members(*format);
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!input.empty() && input[0] == 'T') {
    const auto end = std::min(input.find('\0', 1), input.size());
    fuzz_schema(std::string(input.substr(1, end - 1)), input.substr(std::min(end + 1, input.size())));
    return 0;
  }
  if (input.size() >= 3 && input[0] == 'S') {
    const std::size_t length = std::min<std::size_t>(
        (static_cast<std::size_t>(static_cast<unsigned char>(input[1])) << 8) | static_cast<unsigned char>(input[2]),
        input.size() - 3);
    fuzz_schema(base64(input.substr(3, length)), input.substr(3 + length));
    return 0;
  }
  static const std::unique_ptr<InputFormat> text_form =
      hbingest::event_formats::make_input_format(hbingest::config::EventFormat::protobuf, &registry());
  static const std::unique_ptr<InputFormat> descriptor_form =
      hbingest::event_formats::make_input_format(hbingest::config::EventFormat::protobuf, &registry());
  const std::string_view rest(reinterpret_cast<const char*>(data), size);

  static const std::unique_ptr<InputFormat> reference = reference_format(registry());
  const auto from_text = text_form->parse(hbingest::testing::confluent_framed(1, rest));
  const auto from_descriptor = descriptor_form->parse(hbingest::testing::confluent_framed(2, rest));
  check_same(from_text, *text_form, reference->parse(hbingest::testing::confluent_framed(1, rest)), *reference);
  const auto proto3_only = hbingest::testing::confluent_framed(4, rest);
  check_same(text_form->parse(proto3_only), *text_form, reference->parse(proto3_only), *reference);
  text_form->parse(hbingest::testing::confluent_framed(1, rest));  // (what the checks below read)
  reference->parse(hbingest::testing::confluent_framed(1, rest));
  check(from_text.has_value() == from_descriptor.has_value());
  if (from_text) {
    check(!from_text->reason.empty() && !from_text->message.empty());
    check(from_text->reason == from_descriptor->reason);
    check(from_text->reason != "bad_schema" && from_text->reason != "unknown_schema");
    return 0;
  }
  const auto a = members(*text_form);
  const auto b = members(*descriptor_form);
  check(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    check(a[i].name == b[i].name && a[i].value == b[i].value && a[i].text == b[i].text && a[i].null == b[i].null);
  }
  return 0;
}
