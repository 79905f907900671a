#include "hbingest/config/duration.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace hbingest::config {

namespace {

using Unit = std::pair<std::string_view, std::int64_t>;  // suffix, milliseconds

// Largest first: format_duration() walks this order.
constexpr std::array<Unit, 5> kUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid duration '" + std::string(text) + "': " + std::string(why) +
                              " (expected e.g. 50ms, 1s, 10m, 2h, 1h30m)");
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text) {
  if (text.empty()) fail(text, "empty");
  if (text == "0") return std::chrono::milliseconds{0};
  std::int64_t total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::int64_t number = 0;
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    if (!std::isdigit(static_cast<unsigned char>(*begin))) fail(text, "expected a number");
    auto [after_number, ec] = std::from_chars(begin, end, number);
    if (ec != std::errc{}) fail(text, "number out of range");
    pos = static_cast<std::size_t>(after_number - text.data());
    std::size_t unit_end = pos;
    while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end]))) ++unit_end;
    const std::string_view suffix = text.substr(pos, unit_end - pos);
    if (suffix.empty()) fail(text, "missing unit (ms, s, m, h, d)");
    std::int64_t unit_ms = 0;
    for (const auto& [name, ms] : kUnits) {
      if (name == suffix) unit_ms = ms;
    }
    if (unit_ms == 0) fail(text, "unknown unit '" + std::string(suffix) + "'");
    if (number > (std::numeric_limits<std::int64_t>::max() - total) / unit_ms) fail(text, "too large");
    total += number * unit_ms;
    pos = unit_end;
  }
  return std::chrono::milliseconds{total};
}

std::string format_duration(std::chrono::milliseconds value) {
  std::int64_t rest = value.count();
  if (rest == 0) return "0";
  std::string out;
  if (rest < 0) {
    // Never produced by parse_duration(); printed so a bug shows rather than hides.
    out = "-";
    rest = -rest;
  }
  for (const auto& [name, ms] : kUnits) {
    if (rest >= ms) {
      out += std::to_string(rest / ms);
      out += name;
      rest %= ms;
    }
  }
  return out;
}

}  // namespace hbingest::config
