// libFuzzer target: a field path and a JSON message → parse_field_path, JsonEvent, and the walk
// (Record::at, append_text_at, visit_members). Input: the path's text up to the first newline,
// then the message.
// Properties: nothing crashes, hangs (a path is at most kMaxPathSteps steps, each passing over a
// level's members once) or throws but FieldPathError, which says where; a parsed path prints back
// to the same steps; every prefix of the path is walked, and:
//   - at() and append_text_at() agree on whether there is a value; a null's text is empty;
//   - a top-level path answers as field(name);
//   - visit_members succeeds only on an object (a NestedValue), and the last member it gives of a
//     name is what the path one step further answers, value and text;
//   - a step below an absent or scalar value finds nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hbingest/event_formats/field_path.h"
#include "hbingest/event_formats/json_event.h"
#include "path_walk.h"

namespace {

using hbingest::event_formats::FieldPath;
using hbingest::event_formats::FieldPathError;
using hbingest::event_formats::JsonEvent;
using hbingest::event_formats::PathStep;

void check(bool ok) { hbingest::fuzz::path_check(ok); }

// A path printed back from its steps (names' dots escaped).
std::string print(const std::vector<PathStep>& steps) {
  std::string out;
  for (const auto& step : steps) {
    if (step.index) {
      out += "[" + std::to_string(*step.index) + "]";
      continue;
    }
    if (!out.empty()) out += '.';
    for (const char c : step.name) {
      if (c == '.') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto newline = input.find('\n');
  const std::string_view path_text = input.substr(0, newline);
  const std::string_view json = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);

  std::optional<FieldPath> path;
  try {
    path = hbingest::event_formats::parse_field_path(path_text);
  } catch (const FieldPathError& e) {
    check(std::string_view(e.what()).find("field path") != std::string_view::npos);
  }
  if (path) {
    check(!path->steps.empty() && path->steps.size() <= hbingest::event_formats::kMaxPathSteps);
    check(path->text == path_text);
    check(hbingest::event_formats::parse_field_path(print(path->steps)).steps == path->steps);
  }

  static JsonEvent event;
  if (event.parse(json)) {
    if (path) check(!event.at(*path));
    return 0;
  }
  if (path) hbingest::fuzz::walk_path(event, *path);
  // The message's own top-level names as paths, and a few fixed ones.
  for (std::size_t i = 0; i < event.member_count() && i < 16; ++i) {
    try {
      hbingest::fuzz::walk_path(event, hbingest::event_formats::parse_field_path(event.member_name(i)));
    } catch (const FieldPathError&) {
    }
  }
  for (const char* fixed : {"a.b", "a[0]", "a[4611686018427387904]", "items[0].sku", "a.a.a.a.a.a.a.a"}) {
    hbingest::fuzz::walk_path(event, hbingest::event_formats::parse_field_path(fixed));
  }
  return 0;
}
