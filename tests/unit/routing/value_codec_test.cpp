// Typed cell values against HBase's own Bytes.toBytes. The expected bytes were printed by
// org.apache.hadoop.hbase.util.Bytes of hbase-common 2.6.1 (the stack's jar) for the same values,
// and the expected text of a bigdecimal by Java's BigDecimal.toString(); the integration test
// value_types_integration_test reads cells written here back with Bytes.toX on the real stack.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/value_type.h"

namespace hbingest::routing {
namespace {

using keyspec::FieldValue;
using keyspec::NestedValue;
using namespace std::string_literals;

std::string hex(std::string_view bytes) { return keyspec::to_hex(bytes); }

std::string unhex(std::string_view text) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16));
  }
  return bytes;
}

// The bytes `value` is written as, or "refused: <why>".
std::string written(const FieldValue& value, ValueType type) {
  std::string out;
  if (auto problem = append_value(value, type, out)) return "refused: " + *problem;
  return hex(out);
}

std::string type_written(std::string_view type_name, const FieldValue& value) {
  return written(value, *value_type_named(type_name));
}

nlohmann::json rendered(std::string_view bytes, ValueType type) {
  nlohmann::json out;
  if (auto problem = render_value(bytes, type, out)) return "problem: " + *problem;
  return out;
}

TEST(ValueTypeTest, NamesAreJavasAndReadBack) {
  EXPECT_EQ(value_type_names().size(), 10u);
  for (const auto name : value_type_names()) {
    const auto type = value_type_named(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(value_type_name(*type), name);
  }
  EXPECT_EQ(value_type_named("long"), ValueType::int64);
  EXPECT_EQ(value_type_named("int"), ValueType::int32);
  EXPECT_EQ(value_type_named("short"), ValueType::int16);
  EXPECT_EQ(value_type_named("double"), ValueType::float64);
  EXPECT_EQ(value_type_named("float"), ValueType::float32);
  EXPECT_FALSE(value_type_named("Long").has_value());
  EXPECT_FALSE(value_type_named("integer").has_value());
  EXPECT_FALSE(value_type_named("").has_value());
}

TEST(ValueTypeTest, IntegersAreBigEndianTwosComplementOfTheirWidth) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(type_written("long", std::int64_t{42}), "000000000000002a");
  EXPECT_EQ(type_written("long", std::int64_t{-1}), "ffffffffffffffff");
  EXPECT_EQ(type_written("long", kMin), "8000000000000000");
  EXPECT_EQ(type_written("long", kMax), "7fffffffffffffff");
  EXPECT_EQ(type_written("int", std::int64_t{-2}), "fffffffe");
  EXPECT_EQ(type_written("int", std::int64_t{2147483647}), "7fffffff");
  EXPECT_EQ(type_written("int", std::int64_t{-2147483648}), "80000000");
  EXPECT_EQ(type_written("short", std::int64_t{-2}), "fffe");
  EXPECT_EQ(type_written("short", std::int64_t{-32768}), "8000");
  EXPECT_EQ(type_written("short", std::int64_t{32767}), "7fff");
}

TEST(ValueTypeTest, AnIntegralDoubleIsAWholeNumberAndAnythingElseIsRefused) {
  EXPECT_EQ(type_written("long", 1e3), "00000000000003e8");
  EXPECT_EQ(type_written("long", -0.0), "0000000000000000");
  EXPECT_EQ(type_written("long", -9223372036854775808.0), "8000000000000000");
  EXPECT_EQ(type_written("long", 9223372036854775808.0), "refused: 9223372036854775808 is out of range for type long");
  EXPECT_EQ(type_written("long", 2.5), "refused: 2.5 is not a whole number for type long");
  EXPECT_EQ(type_written("long", std::nan("")), "refused: NaN is not a whole number for type long");
  EXPECT_EQ(type_written("int", 1e10), "refused: 1e+10 is out of range for type int");
  EXPECT_EQ(type_written("short", std::int64_t{40000}), "refused: 40000 is out of range for type short");
  EXPECT_EQ(type_written("short", std::int64_t{-32769}), "refused: -32769 is out of range for type short");
  EXPECT_EQ(type_written("int", std::int64_t{2147483648}), "refused: 2147483648 is out of range for type int");
}

TEST(ValueTypeTest, NumbersAsTextBooleansNullsAndRecordsAreNotNumbers) {
  EXPECT_EQ(type_written("long", std::string_view("42")),
            "refused: a string is not a long (numbers written as text are not converted; type bigdecimal reads "
            "decimal text, text writes it as it is)");
  EXPECT_EQ(type_written("int", true), "refused: a boolean is not an int");
  EXPECT_EQ(type_written("double", std::monostate{}),
            "refused: null is not a double (null fields are skipped, emptied or deleted by the route's null_fields)");
  EXPECT_EQ(type_written("float", NestedValue{}), "refused: a record, map or array is not a float");
  EXPECT_EQ(type_written("bigdecimal", false), "refused: a boolean is not a bigdecimal");
}

TEST(ValueTypeTest, DoublesAreTheirIeeeBitsBigEndianWithJavasNaN) {
  EXPECT_EQ(type_written("double", 0.1), "3fb999999999999a");
  EXPECT_EQ(type_written("double", -0.0), "8000000000000000");
  EXPECT_EQ(type_written("double", 5e-324), "0000000000000001");                   // Double.MIN_VALUE, subnormal
  EXPECT_EQ(type_written("double", 2.2250738585072009e-308), "000fffffffffffff");  // largest subnormal
  EXPECT_EQ(type_written("double", -std::numeric_limits<double>::infinity()), "fff0000000000000");
  EXPECT_EQ(type_written("double", std::numeric_limits<double>::max()), "7fefffffffffffff");
  // A NaN with a payload (Avro and Protobuf carry raw bits) becomes Double.NaN.
  EXPECT_EQ(type_written("double", std::bit_cast<double>(std::uint64_t{0x7ff0000000000001})), "7ff8000000000000");
  EXPECT_EQ(type_written("double", std::bit_cast<double>(std::uint64_t{0xfff8000000000000})), "7ff8000000000000");
  // An integer is rounded to the nearest double, as Java's (double) 9007199254740993L.
  EXPECT_EQ(type_written("double", std::int64_t{9007199254740993}), "4340000000000000");
  EXPECT_EQ(type_written("double", std::int64_t{-3}), "c008000000000000");
  EXPECT_EQ(type_written("double", true), "refused: a boolean is not a double");
}

TEST(ValueTypeTest, FloatsRoundToNearestAndRefuseWhatWouldOverflow) {
  EXPECT_EQ(type_written("float", 0.1), "3dcccccd");
  EXPECT_EQ(type_written("float", std::int64_t{16777217}), "4b800000");  // (float) 16777217L
  EXPECT_EQ(type_written("float", 1e-50), "00000000");                   // (float) 1e-50: underflows to 0
  EXPECT_EQ(type_written("float", 1.401298464324817e-45), "00000001");   // Float.MIN_VALUE
  EXPECT_EQ(type_written("float", -0.0), "80000000");
  EXPECT_EQ(type_written("float", static_cast<double>(std::numeric_limits<float>::max())), "7f7fffff");
  EXPECT_EQ(type_written("float", 1e300), "refused: 1e+300 is out of range for type float");
  EXPECT_EQ(type_written("float", std::numeric_limits<double>::infinity()), "7f800000");
  EXPECT_EQ(type_written("float", std::bit_cast<double>(std::uint64_t{0x7ff0000000000001})), "7fc00000");
}

TEST(ValueTypeTest, BooleansAreOneByteAndOnlyBooleans) {
  EXPECT_EQ(type_written("boolean", true), "ff");
  EXPECT_EQ(type_written("boolean", false), "00");
  EXPECT_EQ(type_written("boolean", std::int64_t{1}), "refused: an integer is not a boolean");
  EXPECT_EQ(type_written("boolean", std::string_view("true")), "refused: a string is not a boolean");
}

TEST(ValueTypeTest, StringsAreTheirUtf8AndInvalidUtf8IsRefused) {
  EXPECT_EQ(type_written("string", std::string_view("h\xc3\xa9llo\xf0\x9f\x98\x80")), "68c3a96c6c6ff09f9880");
  EXPECT_EQ(type_written("string", std::string_view("")), "");
  EXPECT_EQ(type_written("string", std::string_view("a\0b", 3)), "610062");
  const std::string refusal = "refused: the string is not valid UTF-8 for type string (type bytes writes any bytes)";
  EXPECT_EQ(type_written("string", std::string_view("\xff")), refusal);
  EXPECT_EQ(type_written("string", std::string_view("\xc0\xaf")), refusal);      // overlong '/'
  EXPECT_EQ(type_written("string", std::string_view("\xed\xa0\x80")), refusal);  // a UTF-16 surrogate
  EXPECT_EQ(type_written("string", std::string_view("ok\xe2\x82")), refusal);    // truncated
  EXPECT_EQ(type_written("string", std::int64_t{1}), "refused: an integer is not a string");
  EXPECT_EQ(type_written("bytes", std::string_view("\0\xff\xc0", 3)), "00ffc0");
  EXPECT_EQ(type_written("bytes", 1.5), "refused: a floating-point number is not bytes");
}

TEST(ValueTypeTest, TextIsTheRecordsToWrite) {
  std::string out;
  EXPECT_THROW((void)append_value(std::int64_t{1}, ValueType::text, out), std::invalid_argument);
}

TEST(ValueTypeTest, ARefusalLeavesTheOutputAsItWas) {
  std::string out = "prefix";
  for (const auto type : {ValueType::int64, ValueType::int16, ValueType::float32, ValueType::boolean,
                          ValueType::bigdecimal, ValueType::string}) {
    EXPECT_TRUE(append_value(std::string_view("1.2.3\xff"), type, out).has_value()) << value_type_name(type);
  }
  EXPECT_TRUE(append_value(1e300, ValueType::float32, out).has_value());
  EXPECT_EQ(out, "prefix");
  ASSERT_FALSE(append_value(std::int64_t{1}, ValueType::int16, out).has_value());
  EXPECT_EQ(out, "prefix\x00\x01"s);
}

// new BigDecimal(text): Bytes.toBytes of it, and its toString().
struct DecimalVector {
  const char* text;
  const char* bytes;
  const char* java_string;
};

constexpr DecimalVector kDecimals[] = {
    {"-12.30", "00000002fb32", "-12.30"},
    {"0", "0000000000", "0"},
    {"128", "000000000080", "128"},
    {"-128", "0000000080", "-128"},
    {"-129", "00000000ff7f", "-129"},
    {"255", "0000000000ff", "255"},
    {"-256", "00000000ff00", "-256"},
    {"1.5E+3", "fffffffe0f", "1.5E+3"},
    {"0.00", "0000000200", "0.00"},
    {"-0", "0000000000", "0"},
    {"12345678901234567890123456789", "0000000027e41b3246bec9b16e398115", "12345678901234567890123456789"},
    {"-9223372036854775808", "000000008000000000000000", "-9223372036854775808"},
    {"1e-7", "0000000701", "1E-7"},
    {".5", "0000000105", "0.5"},
    {"5.", "0000000005", "5"},
    {"+7", "0000000007", "7"},
    {"-1", "00000000ff", "-1"},
    {"1E+2147483647", "8000000101", "1E+2147483647"},
    {"1E-2147483647", "7fffffff01", "1E-2147483647"},
    {"0.000001", "0000000601", "0.000001"},
    {"0.0000001", "0000000701", "1E-7"},
    {"123.456e-10", "0000000d01e240", "1.23456E-8"},
    {"-0.00001234", "00000008fb2e", "-0.00001234"},
    {"1e0000000000003", "fffffffd01", "1E+3"},
    {"2.50", "0000000200fa", "2.50"},
    {"9999999999999999999999999999999999999999", "000000001d6329f1c35ca4bfabb9f560ffffffffff",
     "9999999999999999999999999999999999999999"},
};

TEST(ValueTypeTest, BigDecimalTextIsReadAsJavaReadsItAndRendersAsJavaPrintsIt) {
  for (const auto& vector : kDecimals) {
    EXPECT_EQ(type_written("bigdecimal", std::string_view(vector.text)), vector.bytes) << vector.text;
    EXPECT_EQ(rendered(unhex(vector.bytes), ValueType::bigdecimal), vector.java_string) << vector.text;
  }
}

TEST(ValueTypeTest, BigDecimalFromNumbers) {
  EXPECT_EQ(type_written("bigdecimal", std::int64_t{0}), "0000000000");
  EXPECT_EQ(type_written("bigdecimal", std::numeric_limits<std::int64_t>::min()), "000000008000000000000000");
  EXPECT_EQ(type_written("bigdecimal", std::numeric_limits<std::int64_t>::max()), "000000007fffffffffffffff");
  // A double: its shortest decimal, scale never negative.
  EXPECT_EQ(type_written("bigdecimal", 2.5), "0000000119");                   // 25 scale 1
  EXPECT_EQ(type_written("bigdecimal", 0.1), "0000000101");                   // 1 scale 1, not 0.1000000000000000055...
  EXPECT_EQ(type_written("bigdecimal", 1e20), "00000000056bc75e2d63100000");  // 10^20 scale 0
  EXPECT_EQ(type_written("bigdecimal", 100.0), "0000000064");                 // 100 scale 0
  EXPECT_EQ(type_written("bigdecimal", -3.0), "00000000fd");
  EXPECT_EQ(type_written("bigdecimal", -0.0), "0000000000");
  EXPECT_EQ(type_written("bigdecimal", 5e-324), "0000014405");  // 5 scale 324
  nlohmann::json largest;
  std::string bytes;
  ASSERT_FALSE(append_value(std::numeric_limits<double>::max(), ValueType::bigdecimal, bytes).has_value());
  ASSERT_FALSE(render_value(bytes, ValueType::bigdecimal, largest).has_value());
  EXPECT_EQ(largest, "17976931348623157" + std::string(292, '0'));
  EXPECT_EQ(type_written("bigdecimal", std::numeric_limits<double>::quiet_NaN()),
            "refused: NaN has no decimal value for type bigdecimal");
  EXPECT_EQ(type_written("bigdecimal", -std::numeric_limits<double>::infinity()),
            "refused: -Infinity has no decimal value for type bigdecimal");
}

TEST(ValueTypeTest, BigDecimalRefusesWhatJavaRefusesAndOverlongDigits) {
  for (const char* text : {"", "-", ".", "+.", "1.5e", "1.2.3", " 1", "1 ", "1E+-1", "abc", "12,5", "0x10", "1_000",
                           "Infinity", "NaN", "1e", "e5", "--1", "\xd9\xa1"}) {
    EXPECT_EQ(type_written("bigdecimal", std::string_view(text)).rfind("refused: the string ", 0), 0u) << text;
  }
  EXPECT_EQ(type_written("bigdecimal", std::string_view("1e2147483648")),
            "refused: the string has an exponent out of range for type bigdecimal");
  EXPECT_EQ(type_written("bigdecimal", std::string_view("1e99999999999999999999999")),
            "refused: the string has an exponent out of range for type bigdecimal");
  EXPECT_EQ(type_written("bigdecimal", std::string_view("-0.00E-2147483647")),
            "refused: the string has a scale out of range (a BigDecimal's scale is an int) for type bigdecimal");
  const std::string most(kMaxDecimalDigits, '9');
  EXPECT_EQ(type_written("bigdecimal", std::string_view(most)).rfind("refused", 0), std::string::npos);
  EXPECT_EQ(type_written("bigdecimal", std::string_view(most + "9")),
            "refused: the string has more than 1200 significant digits for type bigdecimal");
  // Leading zeros are not significant; a long fraction of zeros is a large scale.
  const std::string zeros = "0." + std::string(100000, '0') + "1";
  EXPECT_EQ(type_written("bigdecimal", std::string_view(zeros)), "000186a101");
  EXPECT_EQ(type_written("bigdecimal", std::string_view(std::string(100000, '0') + "7")), "0000000007");
}

TEST(ValueTypeTest, TheLargestDecimalsRoundTripExactly) {
  for (const std::string& text : {std::string(kMaxDecimalDigits, '9'), "-" + std::string(kMaxDecimalDigits, '9'),
                                  "-1" + std::string(kMaxDecimalDigits - 1, '0'), "4294967296"s, "-4294967296"s,
                                  "18446744073709551616"s, "-18446744073709551615"s, "1000000000"s, "999999999"s}) {
    std::string bytes;
    ASSERT_FALSE(append_value(std::string_view(text), ValueType::bigdecimal, bytes).has_value()) << text;
    EXPECT_LE(bytes.size() - 4, kMaxUnscaledBytes);
    EXPECT_EQ(rendered(bytes, ValueType::bigdecimal), text);
  }
}

TEST(ValueTypeTest, RenderedNumbersAreJsonNumbers) {
  EXPECT_EQ(rendered(unhex("8000000000000000"), ValueType::int64), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(rendered(unhex("000000000000002a"), ValueType::int64).dump(), "42");
  EXPECT_EQ(rendered(unhex("fffffffe"), ValueType::int32).dump(), "-2");
  EXPECT_EQ(rendered(unhex("8000"), ValueType::int16).dump(), "-32768");
  EXPECT_EQ(rendered(unhex("3fb999999999999a"), ValueType::float64).dump(), "0.1");
  EXPECT_EQ(rendered(unhex("0000000000000001"), ValueType::float64).dump(), "5e-324");
  EXPECT_EQ(rendered(unhex("3dcccccd"), ValueType::float32).dump(), "0.1");  // not 0.10000000149011612
  EXPECT_EQ(rendered(unhex("00000001"), ValueType::float32).dump(), "1e-45");
  EXPECT_EQ(rendered(unhex("7f7fffff"), ValueType::float32).dump(), "3.4028235e+38");
  const auto negative_zero = rendered(unhex("8000000000000000"), ValueType::float64);
  ASSERT_TRUE(negative_zero.is_number_float());
  EXPECT_TRUE(std::signbit(negative_zero.get<double>()));
  EXPECT_EQ(rendered(unhex("7ff8000000000000"), ValueType::float64), "NaN");
  EXPECT_EQ(rendered(unhex("7ff0000000000001"), ValueType::float64), "NaN");
  EXPECT_EQ(rendered(unhex("fff0000000000000"), ValueType::float64), "-Infinity");
  EXPECT_EQ(rendered(unhex("7f800000"), ValueType::float32), "Infinity");
  EXPECT_EQ(rendered(unhex("ffc00000"), ValueType::float32), "NaN");
}

TEST(ValueTypeTest, RenderedOtherTypes) {
  EXPECT_EQ(rendered("\xff"s, ValueType::boolean), true);
  EXPECT_EQ(rendered("\x01"s, ValueType::boolean), true);  // Bytes.toBoolean: any non-zero byte
  EXPECT_EQ(rendered("\x00"s, ValueType::boolean), false);
  EXPECT_EQ(rendered("\x00\xff\xc0"s, ValueType::bytes), "AP/A");
  EXPECT_EQ(rendered("", ValueType::bytes), "");
  EXPECT_EQ(rendered("ab", ValueType::bytes), "YWI=");
  EXPECT_EQ(rendered("h\xc3\xa9", ValueType::string), "h\xc3\xa9");
  EXPECT_EQ(rendered("12.5", ValueType::text), "12.5");
  // Invalid UTF-8 stays in the value; writing the JSON replaces it, as the server writes answers.
  const auto invalid = rendered("a\xff", ValueType::string);
  EXPECT_EQ(invalid.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "\"a\xef\xbf\xbd\"");
  // Stored by a Java writer with another layout: a negative scale, a non-minimal unscaled value,
  // the least scale.
  EXPECT_EQ(rendered(unhex("ffffffff80"), ValueType::bigdecimal), "-1.28E+3");
  EXPECT_EQ(rendered(unhex("0000000300ff"), ValueType::bigdecimal), "0.255");
  EXPECT_EQ(rendered(unhex("800000000001"), ValueType::bigdecimal), "1E+2147483648");
  EXPECT_EQ(rendered(unhex("00000000000000000001"), ValueType::bigdecimal), "1");
  EXPECT_EQ(rendered(unhex("00000000ffffffffff"), ValueType::bigdecimal), "-1");
  EXPECT_EQ(rendered(unhex("0000000080000000"), ValueType::bigdecimal), "-2147483648");
}

TEST(ValueTypeTest, CellsOfTheWrongLengthAreProblemsNotValues) {
  EXPECT_EQ(rendered(std::string(7, '\0'), ValueType::int64), "problem: 7 bytes, a long has 8");
  EXPECT_EQ(rendered(std::string(9, '\0'), ValueType::int64), "problem: 9 bytes, a long has 8");
  EXPECT_EQ(rendered("", ValueType::int32), "problem: 0 bytes, an int has 4");
  EXPECT_EQ(rendered("x", ValueType::int16), "problem: 1 byte, a short has 2");
  EXPECT_EQ(rendered("xyz", ValueType::float64), "problem: 3 bytes, a double has 8");
  EXPECT_EQ(rendered(std::string(8, '\0'), ValueType::float32), "problem: 8 bytes, a float has 4");
  EXPECT_EQ(rendered("", ValueType::boolean), "problem: 0 bytes, a boolean has 1");
  EXPECT_EQ(rendered("\xff\xff"s, ValueType::boolean), "problem: 2 bytes, a boolean has 1");
  EXPECT_EQ(rendered("\0\0\0\x01"s, ValueType::bigdecimal),
            "problem: 4 bytes, a bigdecimal has at least 5 (a 4-byte scale and an unscaled value)");
  EXPECT_EQ(rendered(std::string(4 + kMaxUnscaledBytes + 1, '\x7f'), ValueType::bigdecimal),
            "problem: a bigdecimal whose unscaled value has 513 bytes, more than 512 this reader converts");
  // The longest one it converts: 512 bytes of 0x7f, 1,233 digits at a scale of 0x7f7f7f7f. Java
  // prints it in 1,246 characters, "5.201466193704720327...61106559E-2139060911".
  const auto longest = rendered(std::string(4 + kMaxUnscaledBytes, '\x7f'), ValueType::bigdecimal);
  ASSERT_TRUE(longest.is_string());
  const auto text = longest.get<std::string>();
  EXPECT_EQ(text.size(), 1246u);
  EXPECT_EQ(text.substr(0, 20), "5.201466193704720327");
  EXPECT_EQ(text.substr(text.size() - 20), "61106559E-2139060911");
}

// Every value that is written renders back as what it meant.
TEST(ValueTypeTest, WrittenValuesRenderBack) {
  struct Case {
    FieldValue value;
    ValueType type;
    nlohmann::json expected;
  };
  const Case cases[] = {
      {std::int64_t{-7}, ValueType::int64, -7},
      {std::numeric_limits<std::int64_t>::max(), ValueType::int64, std::numeric_limits<std::int64_t>::max()},
      {std::int64_t{123456}, ValueType::int32, 123456},
      {4.0, ValueType::int16, 4},
      {12.5, ValueType::float64, 12.5},
      {0.3, ValueType::float32, 0.3},
      {true, ValueType::boolean, true},
      {std::string_view("-12.30"), ValueType::bigdecimal, "-12.30"},
      {12.5, ValueType::bigdecimal, "12.5"},
      {std::int64_t{-9}, ValueType::bigdecimal, "-9"},
      {std::string_view("\xe2\x82\xac 5"), ValueType::string, "\xe2\x82\xac 5"},
      {std::string_view("\x01\x02"), ValueType::bytes, "AQI="},
  };
  for (const auto& c : cases) {
    std::string bytes;
    ASSERT_FALSE(append_value(c.value, c.type, bytes).has_value()) << value_type_name(c.type);
    EXPECT_EQ(rendered(bytes, c.type), c.expected) << value_type_name(c.type);
  }
}

}  // namespace
}  // namespace hbingest::routing
