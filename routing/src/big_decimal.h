#pragma once
// java.math.BigDecimal as Bytes.toBytes(BigDecimal) stores it: an int32 scale and an unscaled
// integer of any length, its value unscaled × 10^-scale. The arithmetic here is the little that
// storing and printing one needs: decimal digits ↔ BigInteger.toByteArray() bytes, and
// BigDecimal.toString()'s layout.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hbingest::routing::detail {

struct Decimal {
  bool negative = false;   // never set for zero (BigInteger has no negative zero)
  std::string digits;      // the unscaled magnitude in decimal, no leading zeros; "0" for zero
  std::int32_t scale = 0;  // value = ±digits × 10^-scale
};

// Reads decimal text as new BigDecimal(String) does: an optional sign, digits with at most one
// '.', at least one digit, an optional exponent ([eE][+-]?digits); ASCII only, nothing around it.
// `max_digits` bounds the significant digits. Returns the reason when the text is not one.
std::optional<std::string> parse_decimal(std::string_view text, std::size_t max_digits, Decimal& out);

// BigInteger.toByteArray() of ±digits: big-endian two's complement in the fewest bytes that keep
// the sign bit, appended to `out` (0 → one 0x00 byte).
void append_unscaled(const Decimal& value, std::string& out);

// The magnitude and sign of a big-endian two's complement integer (new BigInteger(byte[])), into
// `out`'s digits and negative. `bytes` is not empty.
void read_unscaled(std::string_view bytes, Decimal& out);

// BigDecimal.toString(): plain when the scale is not negative and the adjusted exponent is at
// least -6, else scientific ("1.5E+3", "1E-7").
std::string to_java_string(const Decimal& value);

}  // namespace hbingest::routing::detail
