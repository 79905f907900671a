#include "schema.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "hbingest/support/text.h"

namespace hbingest::config::detail {

std::optional<bool> parse_bool(const std::string& text) {
  const std::string lower = support::to_lower(text);
  // The YAML 1.1 spellings too: yaml-cpp users write yes/no and on/off.
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  return std::nullopt;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace hbingest::config::detail
