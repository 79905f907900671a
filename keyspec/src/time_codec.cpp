#include "time_codec.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

namespace hbingest::keyspec::detail {
namespace {

constexpr std::int64_t kMsPerDay = 86400000;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool parse_digits(std::string_view text, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > text.size()) return false;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = text[pos + i];
    if (!is_digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

// Writes into a stack buffer; the caller appends the whole formatted time at once.
char* put_digits(char* p, int value, int width) {
  auto v = static_cast<unsigned>(value);
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

std::optional<std::int64_t> days_from_civil(int y, int m, int d) {
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(m)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  return sys_days{ymd}.time_since_epoch().count();
}

struct Civil {
  int year, month, day, hour, minute, second, milli;
};

Civil civil_from_ms(std::int64_t ms) {
  using namespace std::chrono;
  std::int64_t days_since = ms / kMsPerDay;
  std::int64_t rem = ms % kMsPerDay;
  if (rem < 0) {
    rem += kMsPerDay;
    --days_since;
  }
  const year_month_day ymd{sys_days{days{days_since}}};
  const auto r = static_cast<int>(rem);
  return Civil{static_cast<int>(ymd.year()),
               static_cast<int>(static_cast<unsigned>(ymd.month())),
               static_cast<int>(static_cast<unsigned>(ymd.day())),
               r / 3600000,
               r / 60000 % 60,
               r / 1000 % 60,
               r % 1000};
}

bool checked_mul(std::int64_t a, std::int64_t b, std::int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

bool double_to_ms(double v, double scale, std::int64_t& ms) {
  if (!std::isfinite(v)) return false;
  const double scaled = std::floor(v * scale);
  if (scaled < -9.2e18 || scaled > 9.2e18) return false;
  ms = static_cast<std::int64_t>(scaled);
  return true;
}

}  // namespace

bool read_int(const FieldValue& value, std::int64_t& out) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    out = *i;
    return true;
  }
  if (const auto* s = std::get_if<std::string_view>(&value)) {
    if (s->empty()) return false;
    const char* end = s->data() + s->size();
    const auto res = std::from_chars(s->data(), end, out);
    return res.ec == std::errc() && res.ptr == end;
  }
  if (const auto* d = std::get_if<double>(&value)) {
    if (!std::isfinite(*d) || std::floor(*d) != *d || *d < -9.2e18 || *d > 9.2e18) return false;
    out = static_cast<std::int64_t>(*d);
    return true;
  }
  return false;
}

bool parse_rfc3339(std::string_view t, std::int64_t& ms) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !parse_digits(t, 0, 4, y) || t[4] != '-' || !parse_digits(t, 5, 2, mo) || t[7] != '-' ||
      !parse_digits(t, 8, 2, d) || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') || !parse_digits(t, 11, 2, h) ||
      t[13] != ':' || !parse_digits(t, 14, 2, mi) || t[16] != ':' || !parse_digits(t, 17, 2, s)) {
    return false;
  }
  if (h > 23 || mi > 59 || s > 60) return false;
  std::size_t pos = 19;
  int milli = 0;
  if (pos < t.size() && t[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < t.size() && is_digit(t[pos])) {
      if (digits < 3) milli = milli * 10 + (t[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    for (int i = digits; i < 3; ++i) milli *= 10;
  }
  std::int64_t offset_min = 0;
  if (pos >= t.size()) return false;
  if (t[pos] == 'Z' || t[pos] == 'z') {
    ++pos;
  } else if (t[pos] == '+' || t[pos] == '-') {
    int oh = 0, om = 0;
    if (!parse_digits(t, pos + 1, 2, oh) || pos + 3 >= t.size() || t[pos + 3] != ':' ||
        !parse_digits(t, pos + 4, 2, om) || oh > 23 || om > 59) {
      return false;
    }
    offset_min = (oh * 60 + om) * (t[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != t.size()) return false;
  const auto days = days_from_civil(y, mo, d);
  if (!days) return false;
  // A leap second (:60) folds into the next second, as java.time and Python do not represent it.
  ms = *days * kMsPerDay + ((h * 60 + mi) * 60LL + s) * 1000 + milli - offset_min * 60000;
  return true;
}

std::string format_rfc3339(std::int64_t ms) {
  if (ms < kPatternMinMs || ms > kPatternMaxMs) return std::to_string(ms);
  static const std::vector<TimeToken> kRfc = [] {
    std::vector<TimeToken> t;
    bool full = false;
    parse_time_pattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", t, full);
    return t;
  }();
  std::string out;
  format_pattern(kRfc, ms, out);
  return out;
}

std::string parse_time_pattern(std::string_view spec, std::vector<TimeToken>& tokens, bool& full_resolution) {
  tokens.clear();
  std::optional<TimeUnit> last;
  std::optional<TimeUnit> first;
  auto add_unit = [&](TimeUnit unit, int width) -> std::string {
    if (last && static_cast<int>(unit) != static_cast<int>(*last) + 1) {
      return "time pattern fields must run from most to least significant without gaps "
             "(y, M, d, H, m, s, S) so the text sorts like the time";
    }
    if (!first) first = unit;
    last = unit;
    tokens.push_back(TimeToken{unit, width, 0});
    return {};
  };
  // A pattern with '%' is strftime-style: letters outside %-fields are literals ("%Y-%m-%dT%H").
  const bool strftime_style = spec.find('%') != std::string_view::npos;
  for (std::size_t i = 0; i < spec.size();) {
    const char c = spec[i];
    if (c == '%') {
      if (i + 1 >= spec.size()) return "time pattern ends with '%'";
      const char f = spec[i + 1];
      i += 2;
      std::string err;
      switch (f) {
        case 'Y':
          err = add_unit(TimeUnit::Year, 4);
          break;
        case 'm':
          err = add_unit(TimeUnit::Month, 2);
          break;
        case 'd':
          err = add_unit(TimeUnit::Day, 2);
          break;
        case 'H':
          err = add_unit(TimeUnit::Hour, 2);
          break;
        case 'M':
          err = add_unit(TimeUnit::Minute, 2);
          break;
        case 'S':
          err = add_unit(TimeUnit::Second, 2);
          break;
        case 'L':
          err = add_unit(TimeUnit::Milli, 3);
          break;
        case '%':
          tokens.push_back(TimeToken{TimeUnit::Literal, 1, '%'});
          break;
        default:
          return std::string("unsupported strftime field '%") + f + "' (allowed: %Y %m %d %H %M %S %L)";
      }
      if (!err.empty()) return err;
      continue;
    }
    if (c == '\'' && !strftime_style) {  // quoted literal, as in Java patterns: 'T'
      const auto close = spec.find('\'', i + 1);
      if (close == std::string_view::npos || close == i + 1)
        return "unterminated or empty quoted literal in time pattern";
      for (std::size_t k = i + 1; k < close; ++k) tokens.push_back(TimeToken{TimeUnit::Literal, 1, spec[k]});
      i = close + 1;
      continue;
    }
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!letter || strftime_style) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        return "time pattern literals must be printable ASCII";
      }
      tokens.push_back(TimeToken{TimeUnit::Literal, 1, c});
      ++i;
      continue;
    }
    std::size_t run = 1;
    while (i + run < spec.size() && spec[i + run] == c) ++run;
    struct Letter {
      char ch;
      TimeUnit unit;
      std::size_t width;
    };
    static constexpr Letter kLetters[] = {
        {'y', TimeUnit::Year, 4},   {'M', TimeUnit::Month, 2},  {'d', TimeUnit::Day, 2},  {'H', TimeUnit::Hour, 2},
        {'m', TimeUnit::Minute, 2}, {'s', TimeUnit::Second, 2}, {'S', TimeUnit::Milli, 3}};
    bool known = false;
    for (const auto& l : kLetters) {
      if (l.ch != c) continue;
      known = true;
      if (run != l.width) {
        return std::string("time pattern field '") + std::string(run, c) + "' must be exactly " +
               std::string(l.width, c) + " (fixed width keeps keys sortable)";
      }
      if (auto err = add_unit(l.unit, static_cast<int>(l.width)); !err.empty()) return err;
    }
    if (!known) {
      return std::string("unsupported time pattern letter '") + c +
             "' (allowed: yyyy MM dd HH mm ss SSS; quote other letters: 'T')";
    }
    i += run;
  }
  if (!first) return "time pattern has no date or time field";
  // Leading literals are fine; what matters is that the numeric fields form one sorted run.
  full_resolution = *first == TimeUnit::Year && *last == TimeUnit::Milli;
  return {};
}

std::size_t pattern_width(const std::vector<TimeToken>& tokens) {
  std::size_t w = 0;
  for (const auto& t : tokens) w += static_cast<std::size_t>(t.width);
  return w;
}

bool pattern_has(const std::vector<TimeToken>& tokens, TimeUnit unit) {
  for (const auto& t : tokens) {
    if (t.unit == unit) return true;
  }
  return false;
}

bool format_pattern(const std::vector<TimeToken>& tokens, std::int64_t ms, std::string& out) {
  if (ms < kPatternMinMs || ms > kPatternMaxMs) return false;
  const Civil c = civil_from_ms(ms);
  char buf[64];
  char* p = buf;
  for (const auto& t : tokens) {
    if (p + 4 > buf + sizeof buf) {
      out.append(buf, static_cast<std::size_t>(p - buf));
      p = buf;
    }
    switch (t.unit) {
      case TimeUnit::Year:
        p = put_digits(p, c.year, 4);
        break;
      case TimeUnit::Month:
        p = put_digits(p, c.month, 2);
        break;
      case TimeUnit::Day:
        p = put_digits(p, c.day, 2);
        break;
      case TimeUnit::Hour:
        p = put_digits(p, c.hour, 2);
        break;
      case TimeUnit::Minute:
        p = put_digits(p, c.minute, 2);
        break;
      case TimeUnit::Second:
        p = put_digits(p, c.second, 2);
        break;
      case TimeUnit::Milli:
        p = put_digits(p, c.milli, 3);
        break;
      case TimeUnit::Literal:
        *p++ = t.literal;
        break;
    }
  }
  out.append(buf, static_cast<std::size_t>(p - buf));
  return true;
}

bool parse_pattern_text(const std::vector<TimeToken>& tokens, std::string_view text, CivilFields& out) {
  std::size_t pos = 0;
  for (const auto& t : tokens) {
    if (t.unit == TimeUnit::Literal) {
      if (pos >= text.size() || text[pos] != t.literal) return false;
      ++pos;
      continue;
    }
    int v = 0;
    if (!parse_digits(text, pos, static_cast<std::size_t>(t.width), v)) return false;
    pos += static_cast<std::size_t>(t.width);
    switch (t.unit) {
      case TimeUnit::Year:
        out.year = v;
        break;
      case TimeUnit::Month:
        if (v < 1 || v > 12) return false;
        out.month = v;
        break;
      case TimeUnit::Day:
        if (v < 1 || v > 31) return false;
        out.day = v;
        break;
      case TimeUnit::Hour:
        if (v > 23) return false;
        out.hour = v;
        break;
      case TimeUnit::Minute:
        if (v > 59) return false;
        out.minute = v;
        break;
      case TimeUnit::Second:
        if (v > 59) return false;
        out.second = v;
        break;
      case TimeUnit::Milli:
        out.milli = v;
        break;
      case TimeUnit::Literal:
        break;
    }
  }
  return pos == text.size();
}

std::optional<std::int64_t> civil_to_ms(const CivilFields& c) {
  if (c.year < 0 || c.month < 0 || c.day < 0 || c.hour < 0 || c.minute < 0 || c.second < 0 || c.milli < 0) {
    return std::nullopt;
  }
  const auto days = days_from_civil(c.year, c.month, c.day);
  if (!days) return std::nullopt;
  return *days * kMsPerDay + ((c.hour * 60LL + c.minute) * 60 + c.second) * 1000 + c.milli;
}

int utc_month(std::int64_t ms) {
  if (ms < kPatternMinMs || ms > kPatternMaxMs) {
    // Outside 0000..9999 only the month matters; shift by whole 400-year cycles, which repeat exactly.
    constexpr std::int64_t kCycleMs = 146097LL * kMsPerDay;
    ms %= kCycleMs;
    if (ms < 0) ms += kCycleMs;
  }
  return civil_from_ms(ms).month;
}

}  // namespace hbingest::keyspec::detail

namespace hbingest::keyspec {

std::string_view read_time_ms(const FieldValue& value, TimeInput input, std::int64_t& ms) {
  const auto* text = std::get_if<std::string_view>(&value);
  const auto* dbl = std::get_if<double>(&value);
  if (std::holds_alternative<std::monostate>(value) || std::holds_alternative<bool>(value) ||
      std::holds_alternative<NestedValue>(value)) {
    return "wrong type (expected a time)";
  }
  std::int64_t probe = 0;
  if (input == TimeInput::Rfc3339 || (input == TimeInput::Auto && text != nullptr && !detail::read_int(value, probe))) {
    if (text == nullptr) return "wrong type (expected an RFC 3339 string)";
    return detail::parse_rfc3339(*text, ms) ? std::string_view{} : std::string_view{"not an RFC 3339 time"};
  }
  std::int64_t n = 0;
  if (dbl != nullptr && std::floor(*dbl) != *dbl) {
    // Fractional epoch values: seconds with a fraction are common (Python's time.time()).
    const bool seconds = input == TimeInput::EpochS ||
                         (input == TimeInput::Auto && std::fabs(*dbl) < static_cast<double>(kAutoSecondsBelow));
    return detail::double_to_ms(*dbl, seconds ? 1000.0 : 1.0, ms) ? std::string_view{}
                                                                  : std::string_view{"time out of range"};
  }
  if (dbl != nullptr && std::isfinite(*dbl) && std::fabs(*dbl) > 9.2e18) return "time out of range";
  if (!detail::read_int(value, n)) return "wrong type (expected epoch milliseconds/seconds)";
  const bool seconds =
      input == TimeInput::EpochS || (input == TimeInput::Auto && n > -kAutoSecondsBelow && n < kAutoSecondsBelow);
  if (!seconds) {
    ms = n;
    return {};
  }
  return detail::checked_mul(n, 1000, ms) ? std::string_view{} : std::string_view{"time out of range"};
}

}  // namespace hbingest::keyspec
