#include "big_decimal.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace hbingest::routing::detail {
namespace {

constexpr std::uint32_t kChunk = 1'000'000'000;  // nine decimal digits per step of the conversions
constexpr std::size_t kChunkDigits = 9;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Magnitude in 32-bit limbs, least significant first, from decimal digits.
std::vector<std::uint32_t> limbs_of(std::string_view digits) {
  std::vector<std::uint32_t> limbs;
  std::size_t at = 0;
  // The first chunk takes the leftover digits, so that every later one takes nine.
  std::size_t take = digits.size() % kChunkDigits;
  if (take == 0) take = kChunkDigits;
  while (at < digits.size()) {
    std::uint32_t chunk = 0;
    std::uint32_t scale = 1;
    for (std::size_t i = 0; i < take; ++i) {
      chunk = chunk * 10 + static_cast<std::uint32_t>(digits[at + i] - '0');
      scale *= 10;
    }
    at += take;
    take = kChunkDigits;
    std::uint64_t carry = chunk;
    for (auto& limb : limbs) {
      const std::uint64_t product = static_cast<std::uint64_t>(limb) * scale + carry;
      limb = static_cast<std::uint32_t>(product);
      carry = product >> 32;
    }
    if (carry != 0) limbs.push_back(static_cast<std::uint32_t>(carry));
  }
  return limbs;
}

}  // namespace

std::optional<std::string> parse_decimal(std::string_view text, std::size_t max_digits, Decimal& out) {
  std::size_t at = 0;
  bool negative = false;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
  std::string digits;
  std::int64_t fraction_digits = 0;
  bool seen_point = false;
  bool seen_digit = false;
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (is_digit(c)) {
      seen_digit = true;
      if (seen_point) ++fraction_digits;
      if (digits.empty() && c == '0') continue;  // a leading zero is not a significant digit
      if (digits.size() == max_digits) {
        return "has more than " + std::to_string(max_digits) + " significant digits";
      }
      digits += c;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return "is not a decimal number";
  std::int64_t exponent = 0;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    bool exponent_negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) exponent_negative = text[at++] == '-';
    const std::size_t first = at;
    for (; at < text.size() && is_digit(text[at]); ++at) {
      exponent = exponent * 10 + (text[at] - '0');
      // Java's exponent is an int; checked at each digit, so this one never nears int64's end.
      if (exponent > std::numeric_limits<std::int32_t>::max()) return "has an exponent out of range";
    }
    if (at == first) return "is not a decimal number (an exponent without digits)";
    if (exponent_negative) exponent = -exponent;
  }
  if (at != text.size()) return "is not a decimal number";
  // fraction_digits counts every digit after the point, a text of them can be long: checked here.
  const std::int64_t scale = fraction_digits - exponent;
  if (scale < std::numeric_limits<std::int32_t>::min() || scale > std::numeric_limits<std::int32_t>::max()) {
    return "has a scale out of range (a BigDecimal's scale is an int)";
  }
  out.negative = negative && !digits.empty();
  out.digits = digits.empty() ? "0" : std::move(digits);
  out.scale = static_cast<std::int32_t>(scale);
  return std::nullopt;
}

void append_unscaled(const Decimal& value, std::string& out) {
  const auto limbs = limbs_of(value.digits);
  // Big-endian magnitude with one leading zero byte, so the sign bit has room.
  std::string bytes(1, '\0');
  for (auto limb = limbs.rbegin(); limb != limbs.rend(); ++limb) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((*limb >> shift) & 0xFF);
  }
  if (value.negative) {  // two's complement: invert, add one
    for (auto& byte : bytes) byte = static_cast<char>(~static_cast<unsigned char>(byte));
    for (auto byte = bytes.rbegin(); byte != bytes.rend(); ++byte) {
      *byte = static_cast<char>(static_cast<unsigned char>(*byte) + 1);
      if (*byte != '\0') break;
    }
  }
  // BigInteger.toByteArray() is minimal: a leading 0x00 (0xff) goes when the next byte's top bit
  // already says positive (negative).
  std::size_t skip = 0;
  while (skip + 1 < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[skip]);
    const bool next_top = (static_cast<unsigned char>(bytes[skip + 1]) & 0x80) != 0;
    if ((lead == 0x00 && !next_top) || (lead == 0xFF && next_top)) {
      ++skip;
    } else {
      break;
    }
  }
  out.append(bytes, skip);
}

void read_unscaled(std::string_view bytes, Decimal& out) {
  std::string magnitude(bytes);
  const bool negative = (static_cast<unsigned char>(bytes.front()) & 0x80) != 0;
  if (negative) {
    for (auto& byte : magnitude) byte = static_cast<char>(~static_cast<unsigned char>(byte));
    for (auto byte = magnitude.rbegin(); byte != magnitude.rend(); ++byte) {
      *byte = static_cast<char>(static_cast<unsigned char>(*byte) + 1);
      if (*byte != '\0') break;
    }
  }
  // Limbs, least significant first. A negative minimum (0x80 00 ...) negates to itself, which read
  // as unsigned is the right magnitude.
  std::vector<std::uint32_t> limbs((magnitude.size() + 3) / 4, 0);
  for (std::size_t i = 0; i < magnitude.size(); ++i) {
    const std::size_t from_end = magnitude.size() - 1 - i;
    limbs[from_end / 4] |= static_cast<std::uint32_t>(static_cast<unsigned char>(magnitude[i])) << (8 * (from_end % 4));
  }
  while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
  // Repeated division by 10^9 gives nine digits at a time, least significant first.
  std::string reversed;
  while (!limbs.empty()) {
    std::uint64_t remainder = 0;
    for (auto limb = limbs.rbegin(); limb != limbs.rend(); ++limb) {
      const std::uint64_t current = (remainder << 32) | *limb;
      *limb = static_cast<std::uint32_t>(current / kChunk);
      remainder = current % kChunk;
    }
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    for (std::size_t i = 0; i < kChunkDigits && (remainder != 0 || !limbs.empty()); ++i) {
      reversed += static_cast<char>('0' + remainder % 10);
      remainder /= 10;
    }
  }
  out.negative = negative && !reversed.empty();
  out.digits = reversed.empty() ? "0" : std::string(reversed.rbegin(), reversed.rend());
}

std::string to_java_string(const Decimal& value) {
  std::string text = value.negative ? "-" : "";
  const auto& digits = value.digits;
  if (value.scale == 0) return text + digits;
  const std::int64_t adjusted = -static_cast<std::int64_t>(value.scale) + static_cast<std::int64_t>(digits.size()) - 1;
  if (value.scale > 0 && adjusted >= -6) {
    const std::int64_t pad = static_cast<std::int64_t>(value.scale) - static_cast<std::int64_t>(digits.size());
    if (pad >= 0) {  // 0.00ddd
      text += "0.";
      text.append(static_cast<std::size_t>(pad), '0');
      text += digits;
    } else {  // dd.ddd
      const auto point = static_cast<std::size_t>(-pad);
      text.append(digits, 0, point);
      text += '.';
      text.append(digits, point);
    }
    return text;
  }
  text += digits.front();
  if (digits.size() > 1) {
    text += '.';
    text.append(digits, 1);
  }
  if (adjusted != 0) {
    text += 'E';
    if (adjusted > 0) text += '+';
    text += std::to_string(adjusted);
  }
  return text;
}

}  // namespace hbingest::routing::detail
