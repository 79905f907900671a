#include <openssl/evp.h>
#include <simdjson.h>

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <type_traits>

#include "big_decimal.h"
#include "hbingest/routing/value_type.h"

namespace hbingest::routing {
namespace {

using keyspec::FieldValue;

constexpr std::array<std::string_view, 10> kNames = {"text",   "string", "long",    "int",        "short",
                                                     "double", "float",  "boolean", "bigdecimal", "bytes"};

// A double in a refusal: the shortest text that reads back to it; NaN and the infinities by Java's names.
std::string shortest(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
  return std::string(buffer, end);
}

// What a value is, in a refusal: "a string is not a long".
std::string_view kind_of(const FieldValue& value) {
  switch (value.index()) {
    case 0:
      return "null";
    case 1:
      return "a boolean";
    case 2:
      return "an integer";
    case 3:
      return "a floating-point number";
    case 4:
      return "a string";
    default:
      return "a record, map or array";
  }
}

// "a long", "an int", "bytes".
std::string type_noun(ValueType type) {
  const auto name = std::string(value_type_name(type));
  if (type == ValueType::bytes) return name;
  return (type == ValueType::int32 ? "an " : "a ") + name;
}

std::string refused(const FieldValue& value, ValueType type) {
  std::string why = std::string(kind_of(value)) + " is not " + type_noun(type);
  // The two refusals a user most likely meets, with the way out.
  if (std::holds_alternative<std::string_view>(value) && type != ValueType::boolean) {
    why += " (numbers written as text are not converted; type bigdecimal reads decimal text, text writes it as it is)";
  } else if (std::holds_alternative<std::monostate>(value)) {
    why += " (null fields are skipped, emptied or deleted by the route's null_fields)";
  }
  return why;
}

// Big-endian bytes of an integer of the type's width (Bytes.toBytes(long|int|short)).
template <typename Integer>
void append_big_endian(Integer value, std::string& out) {
  using Unsigned = std::make_unsigned_t<Integer>;
  const auto bits = static_cast<Unsigned>(value);
  for (int shift = 8 * (static_cast<int>(sizeof(Integer)) - 1); shift >= 0; shift -= 8) {
    out += static_cast<char>((bits >> shift) & 0xFF);
  }
}

template <typename Unsigned>
Unsigned read_big_endian(std::string_view bytes) {
  Unsigned bits = 0;
  for (const char byte : bytes) bits = static_cast<Unsigned>((bits << 8) | static_cast<unsigned char>(byte));
  return bits;
}

// An integer of `type` (long, int, short) from an integer or an integral double, range-checked.
std::optional<std::string> whole_number(const FieldValue& value, ValueType type, std::int64_t min, std::int64_t max,
                                        std::int64_t& out) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    if (*integer < min || *integer > max) {
      return std::to_string(*integer) + " is out of range for type " + std::string(value_type_name(type));
    }
    out = *integer;
    return std::nullopt;
  }
  if (const auto* real = std::get_if<double>(&value)) {
    if (!std::isfinite(*real) || std::trunc(*real) != *real) {
      return shortest(*real) + " is not a whole number for type " + std::string(value_type_name(type));
    }
    // 2^63 is a double, INT64_MAX is not: compare against the open bound 2^63.
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (*real < -kTwoTo63 || *real >= kTwoTo63 || static_cast<std::int64_t>(*real) < min ||
        static_cast<std::int64_t>(*real) > max) {
      return shortest(*real) + " is out of range for type " + std::string(value_type_name(type));
    }
    out = static_cast<std::int64_t>(*real);
    return std::nullopt;
  }
  return refused(value, type);
}

std::optional<std::string> append_double(const FieldValue& value, std::string& out) {
  double real = 0;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    real = static_cast<double>(*integer);  // nearest, as Java's (double) long
  } else if (const auto* given = std::get_if<double>(&value)) {
    real = *given;
  } else {
    return refused(value, ValueType::float64);
  }
  // Java's Double.NaN, whatever NaN the format gave (Bytes.toBytes keeps a NaN's raw bits).
  const auto bits = std::isnan(real) ? std::uint64_t{0x7ff8000000000000} : std::bit_cast<std::uint64_t>(real);
  append_big_endian(bits, out);
  return std::nullopt;
}

std::optional<std::string> append_float(const FieldValue& value, std::string& out) {
  float real = 0;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    real = static_cast<float>(*integer);  // nearest, as Java's (float) long; never beyond float's range
  } else if (const auto* given = std::get_if<double>(&value)) {
    real = static_cast<float>(*given);
    if (std::isfinite(*given) && std::isinf(real)) return shortest(*given) + " is out of range for type float";
  } else {
    return refused(value, ValueType::float32);
  }
  const auto bits = std::isnan(real) ? std::uint32_t{0x7fc00000} : std::bit_cast<std::uint32_t>(real);
  append_big_endian(bits, out);
  return std::nullopt;
}

std::optional<std::string> append_bigdecimal(const FieldValue& value, std::string& out) {
  detail::Decimal decimal;
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    decimal.negative = *integer < 0;
    // The magnitude as unsigned: -INT64_MIN does not fit an int64.
    const auto magnitude =
        decimal.negative ? ~static_cast<std::uint64_t>(*integer) + 1 : static_cast<std::uint64_t>(*integer);
    decimal.digits = std::to_string(magnitude);
  } else if (const auto* real = std::get_if<double>(&value)) {
    if (!std::isfinite(*real)) return shortest(*real) + " has no decimal value for type bigdecimal";
    // The shortest text that reads back to the double is the decimal its writer most likely meant
    // (a JSON 12.5 is the double nearest 12.5, whose exact binary value has 50-odd digits).
    if (auto problem = detail::parse_decimal(shortest(*real), kMaxDecimalDigits, decimal)) {
      return shortest(*real) + " " + *problem;  // not reached: to_chars writes a decimal
    }
    // "1e+20" has scale -20: written out, so that a double's decimal never has a negative scale.
    if (decimal.scale < 0) {
      if (decimal.digits != "0") decimal.digits.append(static_cast<std::size_t>(-decimal.scale), '0');
      decimal.scale = 0;
    }
  } else if (const auto* text = std::get_if<std::string_view>(&value)) {
    if (auto problem = detail::parse_decimal(*text, kMaxDecimalDigits, decimal)) {
      return "the string " + std::string(*problem) + " for type bigdecimal";
    }
  } else {
    return refused(value, ValueType::bigdecimal);
  }
  append_big_endian(decimal.scale, out);
  detail::append_unscaled(decimal, out);
  return std::nullopt;
}

std::string wrong_length(std::size_t got, ValueType type, std::size_t width) {
  return std::to_string(got) + (got == 1 ? " byte" : " bytes") + ", " + type_noun(type) + " has " +
         std::to_string(width);
}

// NaN and the infinities as Java's Double.toString names them; a number otherwise.
nlohmann::json real_json(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

}  // namespace

std::optional<ValueType> value_type_named(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<ValueType>(i);
  }
  return std::nullopt;
}

std::string_view value_type_name(ValueType type) { return kNames.at(static_cast<std::size_t>(type)); }

std::span<const std::string_view> value_type_names() { return kNames; }

std::optional<std::string> append_value(const FieldValue& value, ValueType type, std::string& out) {
  std::int64_t integer = 0;
  switch (type) {
    case ValueType::text:
      throw std::invalid_argument("append_value: type text is written by the record (Record::append_text)");
    case ValueType::string: {
      const auto* text = std::get_if<std::string_view>(&value);
      if (text == nullptr) return refused(value, type);
      if (!simdjson::validate_utf8(text->data(), text->size())) {
        return "the string is not valid UTF-8 for type string (type bytes writes any bytes)";
      }
      out += *text;
      return std::nullopt;
    }
    case ValueType::bytes: {
      const auto* text = std::get_if<std::string_view>(&value);
      if (text == nullptr) return refused(value, type);
      out += *text;
      return std::nullopt;
    }
    case ValueType::int64:
      if (auto problem = whole_number(value, type, std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max(), integer)) {
        return problem;
      }
      append_big_endian(integer, out);
      return std::nullopt;
    case ValueType::int32:
      if (auto problem = whole_number(value, type, std::numeric_limits<std::int32_t>::min(),
                                      std::numeric_limits<std::int32_t>::max(), integer)) {
        return problem;
      }
      append_big_endian(static_cast<std::int32_t>(integer), out);
      return std::nullopt;
    case ValueType::int16:
      if (auto problem = whole_number(value, type, std::numeric_limits<std::int16_t>::min(),
                                      std::numeric_limits<std::int16_t>::max(), integer)) {
        return problem;
      }
      append_big_endian(static_cast<std::int16_t>(integer), out);
      return std::nullopt;
    case ValueType::float64:
      return append_double(value, out);
    case ValueType::float32:
      return append_float(value, out);
    case ValueType::boolean: {
      const auto* flag = std::get_if<bool>(&value);
      if (flag == nullptr) return refused(value, type);
      out += *flag ? '\xff' : '\0';
      return std::nullopt;
    }
    case ValueType::bigdecimal:
      return append_bigdecimal(value, out);
  }
  throw std::invalid_argument("append_value: not a ValueType");
}

std::optional<std::string> render_value(std::string_view bytes, ValueType type, nlohmann::json& out) {
  switch (type) {
    case ValueType::text:
    case ValueType::string:
      out = std::string(bytes);
      return std::nullopt;
    case ValueType::bytes: {
      // EVP_EncodeBlock counts in int; no HBase cell comes near (hbase.server.keyvalue.maxsize: 10 MiB).
      if (bytes.size() > (std::size_t{1} << 30)) return "a cell of more than 1 GiB is not rendered";
      std::string base64(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock ends it with a NUL
      const int written =
          EVP_EncodeBlock(reinterpret_cast<unsigned char*>(base64.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
      base64.resize(static_cast<std::size_t>(written));
      out = std::move(base64);
      return std::nullopt;
    }
    case ValueType::int64:
      if (bytes.size() != 8) return wrong_length(bytes.size(), type, 8);
      out = static_cast<std::int64_t>(read_big_endian<std::uint64_t>(bytes));
      return std::nullopt;
    case ValueType::int32:
      if (bytes.size() != 4) return wrong_length(bytes.size(), type, 4);
      out = static_cast<std::int32_t>(read_big_endian<std::uint32_t>(bytes));
      return std::nullopt;
    case ValueType::int16:
      if (bytes.size() != 2) return wrong_length(bytes.size(), type, 2);
      out = static_cast<std::int16_t>(read_big_endian<std::uint16_t>(bytes));
      return std::nullopt;
    case ValueType::float64:
      if (bytes.size() != 8) return wrong_length(bytes.size(), type, 8);
      out = real_json(std::bit_cast<double>(read_big_endian<std::uint64_t>(bytes)));
      return std::nullopt;
    case ValueType::float32: {
      if (bytes.size() != 4) return wrong_length(bytes.size(), type, 4);
      const auto real = std::bit_cast<float>(read_big_endian<std::uint32_t>(bytes));
      if (!std::isfinite(real)) {
        out = real_json(real);
        return std::nullopt;
      }
      // The float's shortest decimal, as the double nearest it: JSON writes that double as the
      // same short text (0.1f → 0.1), where the float's exact value would print as 0.100000001490116.
      char buffer[32];
      const auto end = std::to_chars(buffer, buffer + sizeof(buffer), real).ptr;
      double nearest = 0;
      std::from_chars(buffer, end, nearest);
      out = nearest;
      return std::nullopt;
    }
    case ValueType::boolean:
      if (bytes.size() != 1) return wrong_length(bytes.size(), type, 1);
      out = bytes[0] != '\0';
      return std::nullopt;
    case ValueType::bigdecimal: {
      if (bytes.size() < 5) {
        return std::to_string(bytes.size()) + (bytes.size() == 1 ? " byte" : " bytes") +
               ", a bigdecimal has at least 5 (a 4-byte scale and an unscaled value)";
      }
      if (bytes.size() - 4 > kMaxUnscaledBytes) {
        return "a bigdecimal whose unscaled value has " + std::to_string(bytes.size() - 4) + " bytes, more than " +
               std::to_string(kMaxUnscaledBytes) + " this reader converts";
      }
      detail::Decimal decimal;
      decimal.scale = static_cast<std::int32_t>(read_big_endian<std::uint32_t>(bytes.substr(0, 4)));
      detail::read_unscaled(bytes.substr(4), decimal);
      out = detail::to_java_string(decimal);
      return std::nullopt;
    }
  }
  return "not a value type";
}

}  // namespace hbingest::routing
