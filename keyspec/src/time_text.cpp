#include "hbingest/keyspec/time_text.h"

#include "time_codec.h"

namespace hbingest::keyspec {

std::optional<std::int64_t> parse_instant_ms(std::string_view text) {
  std::int64_t ms = 0;
  if (detail::read_int(FieldValue{text}, ms)) return ms;
  if (detail::parse_rfc3339(text, ms)) return ms;
  return std::nullopt;
}

std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text) {
  std::int64_t ms = 0;
  if (detail::parse_rfc3339(text, ms)) return ms;
  return std::nullopt;
}

std::string format_instant(std::int64_t ms) { return detail::format_rfc3339(ms); }

}  // namespace hbingest::keyspec
