#include "hbingest/query/time_arg.h"

#include <charconv>
#include <chrono>
#include <stdexcept>

namespace hbingest::query {

namespace {

// Reads exactly `digits` decimal digits at `pos`.
bool read_fixed(std::string_view text, std::size_t& pos, std::size_t digits, int& out) {
  if (pos + digits > text.size()) return false;
  const char* begin = text.data() + pos;
  const auto [end, ec] = std::from_chars(begin, begin + digits, out);
  if (ec != std::errc{} || end != begin + digits) return false;
  pos += digits;
  return true;
}

bool expect(std::string_view text, std::size_t& pos, std::string_view one_of) {
  if (pos >= text.size() || one_of.find(text[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

std::int64_t parse_rfc3339(std::string_view text) {
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const bool shape = read_fixed(text, pos, 4, year) && expect(text, pos, "-") && read_fixed(text, pos, 2, month) &&
                     expect(text, pos, "-") && read_fixed(text, pos, 2, day) && expect(text, pos, "Tt ") &&
                     read_fixed(text, pos, 2, hour) && expect(text, pos, ":") && read_fixed(text, pos, 2, minute) &&
                     expect(text, pos, ":") && read_fixed(text, pos, 2, second);
  if (!shape) throw std::invalid_argument("expected RFC 3339 (2024-05-01T12:00:00Z) or epoch milliseconds");
  int millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int scale = 100;
    const std::size_t first = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      millis += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == first) throw std::invalid_argument("empty fraction of a second");
  }
  int offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!(read_fixed(text, pos, 2, oh) && expect(text, pos, ":") && read_fixed(text, pos, 2, om)) || oh > 23 || om > 59) {
      throw std::invalid_argument("bad UTC offset (expected Z or +hh:mm)");
    }
    offset_minutes = sign * (oh * 60 + om);
  } else {
    throw std::invalid_argument("missing UTC offset (Z or +hh:mm)");
  }
  if (pos != text.size()) throw std::invalid_argument("trailing characters after the time");

  using namespace std::chrono;
  const year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                            std::chrono::day{static_cast<unsigned>(day)}};
  // 60 allows a leap second, which epoch time folds into the next second.
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) throw std::invalid_argument("no such date or time");
  const auto local = sys_days{date} + hours{hour} + minutes{minute} + seconds{second} + milliseconds{millis};
  return duration_cast<milliseconds>((local - minutes{offset_minutes}).time_since_epoch()).count();
}

}  // namespace

std::int64_t parse_time_arg(std::string_view text) {
  if (text.empty()) throw std::invalid_argument("empty time");
  const bool numeric = text.find_first_not_of("-0123456789") == std::string_view::npos;
  if (numeric) {
    std::int64_t ms = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (ec != std::errc{} || end != text.data() + text.size()) {
      throw std::invalid_argument("'" + std::string(text) + "' is not epoch milliseconds");
    }
    return ms;
  }
  try {
    return parse_rfc3339(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("'" + std::string(text) + "': " + e.what());
  }
}

}  // namespace hbingest::query
