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

constexpr std::array<std::pair<std::string_view, KeyFormat>, 6> kKeyFormats = {{
    {"bytes", KeyFormat::bytes},
    {"text", KeyFormat::text},
    {"json", KeyFormat::json},
    {"avro", KeyFormat::avro},
    {"protobuf", KeyFormat::protobuf},
    {"json_schema", KeyFormat::json_schema},
}};

}  // namespace

std::optional<KeyFormat> key_format_named(std::string_view name) {
  for (const auto& [text, format] : kKeyFormats) {
    if (text == name) return format;
  }
  return std::nullopt;
}

std::string_view key_format_name(KeyFormat format) {
  for (const auto& [text, value] : kKeyFormats) {
    if (value == format) return text;
  }
  return "text";
}

std::optional<EventFormat> key_event_format(KeyFormat format) {
  switch (format) {
    case KeyFormat::bytes:
    case KeyFormat::text:
      return std::nullopt;
    case KeyFormat::json:
      return EventFormat::json;
    case KeyFormat::avro:
      return EventFormat::avro;
    case KeyFormat::protobuf:
      return EventFormat::protobuf;
    case KeyFormat::json_schema:
      return EventFormat::json_schema;
  }
  return std::nullopt;
}

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
