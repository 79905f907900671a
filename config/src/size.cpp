#include "hbingest/config/size.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

namespace hbingest::config {

namespace {

using Unit = std::pair<std::string_view, std::uint64_t>;

constexpr std::array<Unit, 10> kUnits = {{
    {"B", 1},
    {"KiB", 1ULL << 10},
    {"MiB", 1ULL << 20},
    {"GiB", 1ULL << 30},
    {"TiB", 1ULL << 40},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"", 1},
}};

[[noreturn]] void fail(std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid size '" + std::string(text) + "': " + std::string(why) +
                              " (expected e.g. 1000, 512KiB, 2MiB, 1GiB)");
}

}  // namespace

std::size_t parse_size(std::string_view text) {
  if (text.empty()) fail(text, "empty");
  std::uint64_t number = 0;
  const char* end = text.data() + text.size();
  auto [after_number, ec] = std::from_chars(text.data(), end, number);
  if (ec == std::errc::result_out_of_range) fail(text, "too large");
  if (ec != std::errc{}) fail(text, "expected a number");
  std::string_view suffix(after_number, static_cast<std::size_t>(end - after_number));
  // "2 MiB" reads naturally; allow one space between number and unit.
  if (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  for (const auto& [name, factor] : kUnits) {
    if (name != suffix) continue;
    if (number > std::numeric_limits<std::size_t>::max() / factor) fail(text, "too large");
    return static_cast<std::size_t>(number * factor);
  }
  fail(text, "unknown unit '" + std::string(suffix) + "'");
}

std::string format_size(std::size_t bytes) {
  // Binary units only, largest first, so the round trip is exact.
  static constexpr std::array<Unit, 4> kBinary = {
      {{"TiB", 1ULL << 40}, {"GiB", 1ULL << 30}, {"MiB", 1ULL << 20}, {"KiB", 1ULL << 10}}};
  if (bytes != 0) {
    for (const auto& [name, factor] : kBinary) {
      if (bytes % factor == 0) return std::to_string(bytes / factor) + std::string(name);
    }
  }
  return std::to_string(bytes);
}

}  // namespace hbingest::config
