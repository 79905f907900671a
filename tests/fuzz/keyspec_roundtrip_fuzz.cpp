// libFuzzer target: encode → decode round trip of every preset (KeySpec::preset_names()).
// Fuzz-derived field values and Kafka metadata are encoded under a preset; when the spec accepts the
// event (encode returns no KeyError), the key must decode to what was encoded:
//   field/reverse → the value's text; hash → hex of the md5 of that text (xxh64 of the topic for events_by_topic); time
//   → the instant read_time_ms gives (number, or the pattern's text for a partial date); partition/offset → the
//   metadata; bucket → time mod buckets; salt → a bucket below salt_buckets() that lead_bucket() reads
//   back (within the event's month for a month salt). Parts tile the key; encoding is deterministic.
#include <fuzzer/FuzzedDataProvider.h>
#include <openssl/evp.h>
#include <xxhash.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/keyspec/event_time.h"
#include "hbingest/keyspec/key_spec.h"

namespace {

using hbingest::keyspec::FieldValue;
using hbingest::keyspec::KeySpec;
using hbingest::keyspec::MapEventFields;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "round trip broken: %s\n", what);
    std::abort();
  }
}

MapEventFields::Value fuzz_value(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 6)) {
    case 0:
      return std::monostate{};
    case 1:
      return in.ConsumeBool();
    case 2:
      return in.ConsumeIntegral<std::int64_t>();
    case 3:  // a plausible epoch ms or s
      return in.ConsumeIntegralInRange<std::int64_t>(-62167219200000, 253402300799999);
    case 4:
      return in.ConsumeFloatingPoint<double>();
    default:
      return in.ConsumeRandomLengthString(40);
  }
}

// The text a string/int/bool value gives a field, reverse or hash component.
std::optional<std::string> text_of(const MapEventFields::Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::nullopt;
}

std::optional<std::int64_t> time_of(const MapEventFields& event, const std::string& field) {
  const auto v = event.field(field);
  std::int64_t ms = 0;
  if (!v || !hbingest::keyspec::read_time_ms(*v, hbingest::keyspec::TimeInput::Auto, ms).empty()) return std::nullopt;
  return ms;
}

std::string md5_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(text.data(), text.size(), digest, &n, EVP_md5(), nullptr);
  return hbingest::keyspec::to_hex(std::string_view(reinterpret_cast<const char*>(digest), n));
}

// XXH64 (seed 0) as 8 big-endian bytes in hex, computed here with libxxhash directly.
std::string xxh64_hex(std::string_view text) {
  std::uint64_t v = XXH64(text.data(), text.size(), 0);
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) bytes[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
  return hbingest::keyspec::to_hex(bytes);
}

struct Civil {
  int year, month, day, hour, minute, second, ms;
};

Civil civil_of(std::int64_t ms) {
  using namespace std::chrono;
  const sys_time<milliseconds> t{milliseconds(ms)};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  return {int(ymd.year()),
          int(unsigned(ymd.month())),
          int(unsigned(ymd.day())),
          int(hms.hours().count()),
          int(hms.minutes().count()),
          int(hms.seconds().count()),
          int(hms.subseconds().count())};
}

// Text of the partial-date patterns of the presets (KeySpec does not expose a component's pattern).
std::optional<std::string> pattern_text(std::string_view preset, std::string_view component, std::int64_t ms) {
  const Civil c = civil_of(ms);
  char buf[64];
  if (preset == "consumption" && component == "month") {
    std::snprintf(buf, sizeof buf, "%04d-%02d", c.year, c.month);
  } else if (preset == "consumption" && component == "day") {
    std::snprintf(buf, sizeof buf, "-%02d %02d:%02d:%02d %03d", c.day, c.hour, c.minute, c.second, c.ms);
  } else {
    return std::nullopt;
  }
  return std::string(buf);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kNames = KeySpec::preset_names();
  static const std::vector<KeySpec> kSpecs = [] {
    std::vector<KeySpec> specs;
    for (const auto& name : kNames) specs.push_back(KeySpec::preset(name));
    return specs;
  }();

  FuzzedDataProvider in(data, size);
  const std::size_t which = in.ConsumeIntegralInRange<std::size_t>(0, kSpecs.size() - 1);
  const KeySpec& spec = kSpecs[which];
  const std::string& preset = kNames[which];

  // Every field any component reads gets a value, or stays absent.
  std::map<std::string, MapEventFields::Value, std::less<>> values;
  for (const auto& c : spec.components()) {
    if (!c.source.starts_with("field:")) continue;
    const std::string field = c.source.substr(6);
    if (!values.contains(field) && in.ConsumeIntegralInRange(0, 15) != 0) values[field] = fuzz_value(in);
  }
  const MapEventFields event(values);
  hbingest::keyspec::KafkaMeta meta;
  meta.topic = "events";
  meta.partition = in.ConsumeBool() ? in.ConsumeIntegralInRange(0, 63) : in.ConsumeIntegral<std::int32_t>();
  meta.offset =
      in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int64_t>(0, 1 << 20) : in.ConsumeIntegral<std::int64_t>();
  meta.timestamp_ms = in.ConsumeIntegral<std::int64_t>();

  std::string key;
  if (spec.encode(event, meta, key)) return 0;  // refused: a KeyError is the spec's answer to a bad event
  std::string again;
  check(!spec.encode(event, meta, again) && again == key, "encoding is not deterministic");

  const auto parts = spec.decode(key);
  const auto& components = spec.components();
  check(parts.size() == components.size(), "part count");
  std::size_t pos = 0;
  std::optional<std::int64_t> time_ms;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    const auto& info = components[i];
    check(part.name == info.name && part.type == info.type, "part names");
    check(part.begin == pos && part.end >= part.begin && part.end <= key.size(), "parts tile the key");
    if (info.width) check(part.end - part.begin == *info.width, "fixed width");
    pos = part.end;
    const std::string field = info.source.starts_with("field:") ? info.source.substr(6) : "";
    const auto value = values.find(field);
    if (part.type == "field" || part.type == "reverse") {
      check(value != values.end() && part.text == text_of(value->second), "field text");
    } else if (part.type == "hash" && info.source == "xxh64(kafka:topic)") {
      check(part.text == xxh64_hex(meta.topic).substr(0, 2 * *info.width), "hash of the topic");
    } else if (part.type == "hash") {
      check(value != values.end() && part.text == md5_hex(*text_of(value->second)), "hash of the field text");
    } else if (part.type == "time") {
      const auto ms = time_of(event, field);
      check(ms.has_value(), "time of an encoded event");
      if (part.number) {
        check(*part.number == *ms, "time value");
        time_ms = ms;
      } else {
        check(part.text == pattern_text(preset, part.name, *ms), "time pattern text");
      }
    } else if (part.type == "partition") {
      check(part.number == meta.partition, "partition");
    } else if (part.type == "offset") {
      check(part.number == meta.offset, "offset");
    } else if (part.type == "bucket") {
      const auto ms = time_of(event, field);
      check(ms && part.number == ((*ms % spec.salt_buckets()) + spec.salt_buckets()) % spec.salt_buckets() &&
                spec.lead_bucket(key) == part.number,
            "time bucket");
    } else if (part.type == "salt") {
      check(part.number && *part.number >= 0 && *part.number < spec.salt_buckets(), "salt range");
      check(i != 0 || spec.lead_bucket(key) == part.number, "lead bucket");
      if (preset == "consumption") {  // a month salt: buckets of the event's month (salt_buckets() = 12 * buckets)
        const auto ms = time_of(event, "ts");
        check(ms && *part.number / (spec.salt_buckets() / 12) == civil_of(*ms).month - 1, "month salt");
      }
    } else {
      check(false, "a component type this target does not know: teach it");
    }
  }
  check(pos == key.size(), "parts cover the key");
  if (const auto sort = spec.sort_key(key); sort && time_ms) check(sort->time_ms == *time_ms, "sort key time");
  return 0;
}
