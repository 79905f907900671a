#include "hbingest/event_formats/field_path.h"

#include <charconv>

namespace hbingest::event_formats {

namespace {

[[noreturn]] void fail(std::string_view text, std::size_t at, std::string_view what) {
  throw FieldPathError("field path '" + std::string(text.substr(0, 64)) + (text.size() > 64 ? "...'" : "'") +
                       ": at byte " + std::to_string(at) + ": " + std::string(what));
}

}  // namespace

FieldPath parse_field_path(std::string_view text) {
  if (text.empty()) throw FieldPathError("field path is empty");
  if (text.size() > kMaxPathBytes) {
    fail(text, kMaxPathBytes, "longer than " + std::to_string(kMaxPathBytes) + " bytes");
  }
  FieldPath path;
  path.text = std::string(text);
  std::size_t at = 0;
  const auto add = [&](PathStep step) {
    if (path.steps.size() == kMaxPathSteps) fail(text, at, "more than " + std::to_string(kMaxPathSteps) + " steps");
    path.steps.push_back(std::move(step));
  };
  const auto read_name = [&] {
    std::string name;
    while (at < text.size() && text[at] != '.' && text[at] != '[' && text[at] != ']') {
      if (text[at] == '\\' && at + 1 < text.size() && text[at + 1] == '.') ++at;
      name.push_back(text[at++]);
    }
    if (name.empty()) fail(text, at, "expected a field name");
    add(PathStep{std::move(name)});
  };
  read_name();
  while (at < text.size()) {
    if (text[at] == '.') {
      ++at;
      read_name();
    } else if (text[at] == '[') {
      const std::size_t close = text.find(']', at);
      if (close == std::string_view::npos) fail(text, at, "'[' without ']'");
      std::size_t index = 0;
      const char* begin = text.data() + at + 1;
      const char* end = text.data() + close;
      const auto [ptr, ec] = std::from_chars(begin, end, index);
      if (begin == end || ec != std::errc() || ptr != end) fail(text, at + 1, "expected an array index (0, 1, ...)");
      add(PathStep{{}, index});
      at = close + 1;
    } else {
      fail(text, at, "expected '.' or '[' after a step");
    }
  }
  return path;
}

}  // namespace hbingest::event_formats
