// libFuzzer target: typed cell values (routing/value_type.h) both ways.
// Input: a first byte choosing the direction and the type, then the fuzzer's data.
//   write: a fuzzed field value (null, bool, int64, double from raw bits, string, nested) is written
//          as the type; when append_value accepts it, render_value of the bytes must succeed and
//          give back what the value meant: the integer, the double's bits, the float the value
//          rounds to, the boolean, the string, the bytes (base64, checked against an encoder of
//          this file), and for a bigdecimal a text that writes the same bytes again (Java's
//          toString reads back to the same BigDecimal).
//   read:  arbitrary bytes are rendered as the type: never a crash; fixed-width types succeed
//          exactly at their width; a rendered bigdecimal written again renders the same.
// A refusal leaves the output untouched.
#include <fuzzer/FuzzedDataProvider.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "hbingest/routing/value_type.h"

namespace {

using hbingest::keyspec::FieldValue;
using hbingest::keyspec::NestedValue;
using hbingest::routing::append_value;
using hbingest::routing::render_value;
using hbingest::routing::ValueType;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "value codec broken: %s\n", what);
    std::abort();
  }
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 3; ++j) group = (group << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    for (std::size_t j = 0; j < 4; ++j) text += j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 0x3F] : '=';
  }
  return text;
}

// Which types render from `bytes` of this many bytes.
bool width_fits(ValueType type, std::size_t size) {
  switch (type) {
    case ValueType::int64:
    case ValueType::float64:
      return size == 8;
    case ValueType::int32:
    case ValueType::float32:
      return size == 4;
    case ValueType::int16:
      return size == 2;
    case ValueType::boolean:
      return size == 1;
    case ValueType::bigdecimal:
      return size >= 5 && size - 4 <= hbingest::routing::kMaxUnscaledBytes;
    default:
      return true;
  }
}

// The bigdecimal `text` writes, or nullopt when it is refused.
std::optional<std::string> decimal_bytes(const std::string& text) {
  std::string bytes;
  if (append_value(std::string_view(text), ValueType::bigdecimal, bytes)) return std::nullopt;
  return bytes;
}

void check_written(const FieldValue& value, ValueType type, const std::string& bytes) {
  nlohmann::json out;
  check(!render_value(bytes, type, out).has_value(), "a written value does not render");
  const auto* integer = std::get_if<std::int64_t>(&value);
  const auto* real = std::get_if<double>(&value);
  switch (type) {
    case ValueType::int64:
    case ValueType::int32:
    case ValueType::int16:
      check(out.is_number_integer(), "an integer type renders a non-integer");
      check(integer ? out.get<std::int64_t>() == *integer : static_cast<double>(out.get<std::int64_t>()) == *real,
            "an integer renders another value");
      break;
    case ValueType::float64: {
      const double meant = integer ? static_cast<double>(*integer) : *real;
      if (std::isnan(meant)) {
        check(out == "NaN", "NaN renders otherwise");
      } else if (std::isinf(meant)) {
        check(out == (meant > 0 ? "Infinity" : "-Infinity"), "an infinity renders otherwise");
      } else {
        check(out.is_number_float() &&
                  std::bit_cast<std::uint64_t>(out.get<double>()) == std::bit_cast<std::uint64_t>(meant),
              "a double renders another double");
      }
      break;
    }
    case ValueType::float32: {
      const float meant = integer ? static_cast<float>(*integer) : static_cast<float>(*real);
      if (std::isnan(meant)) {
        check(out == "NaN", "a float NaN renders otherwise");
      } else if (std::isinf(meant)) {
        check(out == (meant > 0 ? "Infinity" : "-Infinity"), "a float infinity renders otherwise");
      } else {
        check(out.is_number_float() && std::bit_cast<std::uint32_t>(static_cast<float>(out.get<double>())) ==
                                           std::bit_cast<std::uint32_t>(meant),
              "a float renders a number that is another float");
      }
      break;
    }
    case ValueType::boolean:
      check(out == std::get<bool>(value), "a boolean renders otherwise");
      break;
    case ValueType::string:
      check(out == std::string(std::get<std::string_view>(value)), "a string renders otherwise");
      break;
    case ValueType::bytes:
      check(out == base64(std::get<std::string_view>(value)), "bytes render as other base64");
      break;
    case ValueType::bigdecimal: {
      check(out.is_string(), "a bigdecimal renders a non-string");
      const auto again = decimal_bytes(out.get<std::string>());
      check(again.has_value() && *again == bytes, "a bigdecimal's text does not write the same bytes");
      if (integer) check(out == std::to_string(*integer), "an integer bigdecimal renders otherwise");
      break;
    }
    case ValueType::text:
      break;
  }
}

FieldValue fuzz_value(FuzzedDataProvider& in, std::string& storage) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:
      return std::monostate{};
    case 1:
      return in.ConsumeBool();
    case 2:
      return in.ConsumeIntegral<std::int64_t>();
    case 3:
      return static_cast<std::int64_t>(in.ConsumeIntegralInRange<std::int32_t>(-70000, 70000));
    case 4:
      return std::bit_cast<double>(in.ConsumeIntegral<std::uint64_t>());
    case 5:
      return static_cast<double>(in.ConsumeIntegralInRange<std::int32_t>(-70000, 70000)) / 4;
    case 6:
      return NestedValue{};
    default:
      storage = in.ConsumeRandomLengthString(2000);
      return std::string_view(storage);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const bool write = in.ConsumeBool();
  // Every type but text, which the record writes.
  const auto type = static_cast<ValueType>(in.ConsumeIntegralInRange<int>(1, 9));
  if (write) {
    std::string storage;
    const FieldValue value = fuzz_value(in, storage);
    std::string bytes = "kept";
    if (append_value(value, type, bytes)) {
      check(bytes == "kept", "a refusal changed the output");
      return 0;
    }
    check(bytes.rfind("kept", 0) == 0, "a write changed what was there before");
    check_written(value, type, bytes.substr(4));
    return 0;
  }
  const std::string bytes = in.ConsumeRemainingBytesAsString();
  nlohmann::json out = "untouched";
  const auto problem = render_value(bytes, type, out);
  check(problem.has_value() != width_fits(type, bytes.size()),
        "a cell renders at a width it should not, or not at one it should");
  if (problem) {
    check(out == "untouched" && !problem->empty(), "a problem changed the output or says nothing");
    return 0;
  }
  if (type == ValueType::bigdecimal) {
    const auto again = decimal_bytes(out.get<std::string>());
    // A value of more than kMaxDecimalDigits digits is rendered but not written (512 bytes hold 1,233).
    if (again) {
      nlohmann::json twice;
      check(!render_value(*again, type, twice).has_value() && twice == out, "a bigdecimal's text reads back otherwise");
    }
  }
  return 0;
}
