#include <array>
#include <utility>

#include "hbingest/config/config.h"

namespace hbingest::config {
namespace {

constexpr std::array<std::pair<std::string_view, EventFormat>, 4> kFormats = {{
    {"json", EventFormat::json},
    {"avro", EventFormat::avro},
    {"protobuf", EventFormat::protobuf},
    {"json_schema", EventFormat::json_schema},
}};

}  // namespace

std::optional<EventFormat> event_format_named(std::string_view name) {
  for (const auto& [text, format] : kFormats) {
    if (text == name) return format;
  }
  return std::nullopt;
}

std::string_view event_format_name(EventFormat format) {
  for (const auto& [text, value] : kFormats) {
    if (value == format) return text;
  }
  return "json";
}

}  // namespace hbingest::config
