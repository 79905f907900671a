// libFuzzer target: spec parsing, decode, sort_key, planning and the JSON event view must never crash.
// Input: YAML spec text, a 0xFF 0xFF separator, then key bytes to decode under that spec.
// Without a separator the whole input is tried as a spec and, against the events preset, as a key.
// The whole input is also read as a JSON event and encoded under the events preset.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hbingest/event_formats/json_event.h"
#include "hbingest/keyspec/key_spec.h"

namespace {

using hbingest::keyspec::DecodeError;
using hbingest::keyspec::KeySpec;
using hbingest::keyspec::SpecError;

void exercise(const KeySpec& spec, std::string_view key) {
  try {
    (void)spec.decode(key);
  } catch (const DecodeError&) {
  }
  try {
    (void)spec.sort_key(key);
  } catch (const DecodeError&) {
  }
  try {
    hbingest::keyspec::PlanRequest req;
    if (const auto ev = spec.event_component()) req.equals[*ev] = std::string(key.substr(0, 8));
    req.from_ms = 1700000000000;
    req.to_ms = 1700000060000;
    (void)spec.plan(req);
  } catch (const SpecError&) {
  }
  (void)spec.plan_full_table(3);
  (void)spec.split_keys();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto sep = input.find("\xff\xff");
  const std::string_view yaml = input.substr(0, sep);
  const std::string_view key = sep == std::string_view::npos ? input : input.substr(sep + 2);
  static const KeySpec kEvents = KeySpec::preset("events");
  exercise(kEvents, key);
  static hbingest::event_formats::JsonEvent event;
  if (!event.parse(input)) {
    std::string text;
    for (std::size_t i = 0; i < event.member_count(); ++i) event.append_text(i, text);
    (void)kEvents.encode(event, {}, text);
  }
  try {
    exercise(KeySpec::from_yaml_text(yaml, "fuzz"), key);
  } catch (const SpecError&) {
  }
  return 0;
}
