// keyspec::JsonEvent: the field view the daemon and `hbingest key build` share (docs/keyspec.md,
// "Event fields").
#include <gtest/gtest.h>
#include <simdjson.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hbingest/event_formats/json_event.h"
#include "hbingest/keyspec/key_spec.h"
#include "heap_in_use.h"

namespace hbingest::event_formats {
using namespace keyspec;
namespace {

TEST(JsonEvent, TopLevelMembersKeepTheirJsonType) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"s":"caf\u00e9","i":-12,"big":18446744073709551615,"f":1.5e3,"t":true,
                               "n":null,"o":{"a":1},"a":[1,2],"\u0075ser":"bob"})"));
  EXPECT_EQ(event.field("s"), FieldValue{std::string_view("caf\xc3\xa9")});
  EXPECT_EQ(event.field("i"), FieldValue{std::int64_t{-12}});
  EXPECT_EQ(event.field("big"), FieldValue{18446744073709551615.0}) << "above int64: a float";
  EXPECT_EQ(event.field("f"), FieldValue{1500.0});
  EXPECT_EQ(event.field("t"), FieldValue{true});
  EXPECT_EQ(event.field("n"), FieldValue{std::monostate{}});
  EXPECT_EQ(event.field("o"), FieldValue{NestedValue{}});
  EXPECT_EQ(event.field("a"), FieldValue{NestedValue{}});
  EXPECT_EQ(event.field("user"), FieldValue{std::string_view("bob")}) << "names are unescaped too";
  EXPECT_EQ(event.field("missing"), std::nullopt);
  EXPECT_EQ(event.field("S"), std::nullopt) << "names are case-sensitive";
}

TEST(JsonEvent, ARepeatedNameReadsAsItsLastValue) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"user":"first","ts":1,"user":"last","ts":null})"));
  EXPECT_EQ(event.field("user"), FieldValue{std::string_view("last")});
  EXPECT_EQ(event.field("ts"), FieldValue{std::monostate{}});
  ASSERT_EQ(event.member_count(), 4u) << "members list every occurrence";
  EXPECT_EQ(event.member_name(0), "user");
  EXPECT_EQ(event.member_value(0), FieldValue{std::string_view("first")});
  EXPECT_FALSE(event.member_is_null(0));
  EXPECT_TRUE(event.member_is_null(3));
}

TEST(JsonEvent, MemberTextIsWhatACellHolds) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"s":"a\"b","i":3,"u":18446744073709551615,"f":410.0,"g":12.5,"e":1e21,
                               "t":false,"n":null,"o":{"a" : [1, {"b":null}]}})"));
  const auto text = [&](std::size_t i) {
    std::string out = "prefix:";
    event.append_text(i, out);
    return out.substr(7);
  };
  EXPECT_EQ(text(0), "a\"b");
  EXPECT_EQ(text(1), "3");
  EXPECT_EQ(text(2), "18446744073709551615") << "exact, not the float the key spec sees";
  EXPECT_EQ(text(3), "410.0");
  EXPECT_EQ(text(4), "12.5");
  EXPECT_EQ(text(5), "1e+21");
  EXPECT_EQ(text(6), "false");
  EXPECT_EQ(text(7), "");
  EXPECT_EQ(text(8), R"({"a":[1,{"b":null}]})");
}

// The exact text of the values whose text is easy to get subtly wrong; a cell holds these bytes, so
// any change in how a value becomes text must keep every line below.
TEST(JsonEvent, MemberTextOfTrickyValuesIsPinned) {
  using namespace std::string_literals;
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"a":0.1, "b":-0.0, "c":-0, "d":1e-7, "e":5e-324, "f":1.7976931348623157e308,
      "g":1.2345678901234568e+29, "h":-9223372036854775808, "i":9223372036854775807, "j":9223372036854775808,
      "k":100.0, "l":1E2, "m":-1.5, "n":2.5e-5, "o":1e16, "p":1e15, "t":1.0e0, "u":123.456,
      "q":"\u00e9\u0000\u0001\n\"\\\/\ud83d\ude00\u2028",
      "r": [ 1.0 , -0.0, -0, 0.1, 1e21, 18446744073709551615, -1, "\u00e9\u0001\t\"", {"x" : [ ] , "y": { } },
             true, null ],
      "s":{ "k\u00e9y" : "v\"" ,"n" : { "m" : [ [ ], [ 1 ] ] } }})"));
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < event.member_count(); ++i) {
    std::string out = "prefix:";
    event.append_text(i, out);
    texts.push_back(out.substr(7));
  }
  const std::vector<std::string> expected = {
      "0.1",
      "-0.0",  // negative zero keeps its sign and, integral, its ".0"
      "0",     // -0 without a fraction is the integer 0
      "1e-07",
      "5e-324",
      "1.7976931348623157e+308",
      "1.2345678901234568e+29",
      "-9223372036854775808",
      "9223372036854775807",
      "9223372036854775808",  // above int64: exact
      "100.0",
      "100.0",
      "-1.5",
      "2.5e-05",
      "1e+16",
      "1e+15",
      "1.0",
      "123.456",
      "\xc3\xa9\0\x01\n\"\\/\xf0\x9f\x98\x80\xe2\x80\xa8"s,  // strings unescaped, as they are
      R"([1.0,-0.0,0,0.1,1e+21,18446744073709551615,-1,")"
      "\xc3\xa9"
      R"(\u0001\t\"",{"x":[],"y":{}},true,null])",  // nested: minified, escaped again where JSON must
      "{\"k\xc3\xa9y\":\"v\\\"\",\"n\":{\"m\":[[],[1]]}}",
  };
  EXPECT_EQ(texts, expected);
}

// A double's text is std::to_chars' shortest text (with ".0" for an integral one), whichever way
// append_text gets it: amounts with a few decimals take a faster way than to_chars, and that way
// must give the same bytes at every edge of where it applies (0.001, 1e5, 3 decimals, negative,
// a value one bit away from a short decimal).
TEST(JsonEvent, DoubleTextIsToCharsShortestTextEverywhere) {
  const auto reference = [](double value) {
    char buffer[32];
    const auto end = std::to_chars(buffer, buffer + sizeof(buffer), value).ptr;
    std::string text(buffer, end);
    if (text.find_first_of(".eEni") == std::string::npos) text += ".0";
    return text;
  };
  std::vector<double> values = {
      0.001,   0.0005,  0.0015,     0.999,     1.0,  1.1,   9.995,    10.0,   99999.999, 99999.9995, 100000.0,
      99999.0, 10000.0, 1e5 - 1e-9, 0.5,       0.05, 0.005, 0.123,    123.45, 4.35,      0.1 + 0.2,  1.0 / 3.0,
      2.675,   1e-300,  4.9e-324,   12345.678, 0.0,  1e7,   123456.0, 1e15,   1e16,      0.0001,     0.0009};
  std::mt19937_64 random(20261124);
  std::uniform_int_distribution<std::int64_t> cents(0, 10'000'000);
  std::uniform_int_distribution<int> decimals(0, 4);
  std::uniform_real_distribution<double> anywhere(0.0, 200000.0);
  for (int i = 0; i < 20000; ++i) {
    const int k = decimals(random);
    const double scale = std::pow(10.0, k);
    const double amount = static_cast<double>(cents(random) % static_cast<std::int64_t>(100000 * scale)) / scale;
    values.push_back(amount);
    values.push_back(std::nextafter(amount, 0.0));  // one bit off: no short decimal reads back to it
    values.push_back(std::nextafter(amount, 1e6));
    values.push_back(anywhere(random));
  }
  JsonEvent event;
  for (const double magnitude : values) {
    for (const double value : {magnitude, -magnitude}) {
      char digits[40];
      std::snprintf(digits, sizeof(digits), "%.17g", value);  // 17 digits: this exact double
      std::string json = std::string("{\"v\":") + digits;
      if (json.find_first_of(".e") == std::string::npos) json += ".0";  // an integral double stays a double
      json += "}";
      ASSERT_FALSE(event.parse(json)) << json;
      if (event.member_value(0) != FieldValue{value}) continue;  // read as an integer: not a double
      std::string text;
      event.append_text(0, text);
      ASSERT_EQ(text, reference(value)) << json;
    }
  }
}

// A random JSON value for NestedTextIsSimdjsonMinifyEverywhere: every kind of value, strings with
// every byte that needs an escape (and UTF-8 that does not), doubles from random bits, integers at
// the int64/uint64 edges, empty containers, and nesting deeper than simdjson's builder walks
// without recursing (16).
std::string random_json(std::mt19937_64& random, int depth) {
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<std::uint64_t>(n)); };
  const auto random_string = [&] {
    // JSON text pieces, '|' between them: escapes, and UTF-8 both escaped and as its bytes.
    static const auto pieces = [] {
      std::vector<std::string> out;
      std::stringstream all(
          R"(a|sku-00042|\"|\\|\/|\b|\f|\n|\r|\t|\u0000|\u001f|\u007f|\u00e9|\ud83d\ude00|\u2028| |}|]|:|,)"
          "|\xc3\xa9|\xf0\x9f\x98\x80");
      for (std::string piece; std::getline(all, piece, '|');) out.push_back(piece);
      return out;
    }();
    std::string text = "\"";
    for (int n = pick(6); n > 0; --n) text += pieces[static_cast<std::size_t>(pick(static_cast<int>(pieces.size())))];
    return text + "\"";
  };
  const int kind = depth > 40 ? pick(6) : pick(8);
  switch (kind) {
    case 0:
      return random_string();
    case 1: {
      static const std::vector<std::string> integers = {"0",
                                                        "-0",
                                                        "7",
                                                        "-1",
                                                        "9223372036854775807",
                                                        "-9223372036854775808",
                                                        "9223372036854775808",
                                                        "18446744073709551615",
                                                        "1E2",
                                                        "12e-1"};
      if (pick(2) == 0) return integers[static_cast<std::size_t>(pick(static_cast<int>(integers.size())))];
      return std::to_string(static_cast<std::int64_t>(random()) >> pick(64));
    }
    case 2: {
      double value = std::bit_cast<double>(random());
      if (!std::isfinite(value)) value = 1.5;
      char digits[40];
      if (pick(2) == 0) {
        std::snprintf(digits, sizeof(digits), "%.17g", value);
      } else {
        std::snprintf(digits, sizeof(digits), "%.3f", std::fmod(value, 1e6));  // an amount
      }
      return digits;
    }
    case 3:
      return "true";
    case 4:
      return "false";
    case 5:
      return "null";
    case 6: {
      std::string text = "[";
      for (int n = pick(4); n > 0; --n) text += random_json(random, depth + 1) + (n > 1 ? " , " : "");
      return text + "]";
    }
    default: {
      std::string text = "{";
      for (int n = pick(4); n > 0; --n) {
        text += random_string() + " :\t" + random_json(random, depth + 1) + (n > 1 ? ",\n" : "");
      }
      return text + "}";
    }
  }
}

// Objects and arrays are written by our own formatter inside simdjson's minifier (it appends
// faster than simdjson's own): the bytes must be simdjson::minify's, whatever the value holds.
TEST(JsonEvent, NestedTextIsSimdjsonMinifyEverywhere) {
  std::mt19937_64 random(20261125);
  JsonEvent event;
  simdjson::dom::parser parser;
  std::size_t nested = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string value = random_json(random, 0);
    if (i % 100 == 0) value = std::string(30, '[') + value + std::string(30, ']');  // deeper than 16
    const std::string json = "{\"v\": " + value + "}";
    simdjson::dom::element document;
    ASSERT_EQ(parser.parse(json).get(document), simdjson::SUCCESS) << json;
    const auto element = document["v"].value_unsafe();
    if (!element.is_array() && !element.is_object()) continue;
    ++nested;
    ASSERT_FALSE(event.parse(json)) << json;
    std::string text = "prefix:";  // appended, not assigned
    event.append_text(0, text);
    ASSERT_EQ(text, "prefix:" + simdjson::minify(element)) << json;
  }
  EXPECT_GT(nested, 5000u);
}

// simdjson keeps its buffers at ~16 times the largest document it has read. A producer's one large
// event (max_event_bytes allows up to 64 MiB) must not leave them held for every event after it.
TEST(JsonEvent, ALargeEventsBuffersAreGivenBackAtTheNextSmallOne) {
  if (hbingest::testing::kSanitizerAllocator) GTEST_SKIP() << "sanitizer allocator: mallinfo2 does not see its heap";
  const std::string small = R"({"event_id":"login","items":[{"sku":"sku-00042","qty":1}]})";
  // Wide (100,000 fields) and long (an 8 MiB array): every buffer that grows with an event grows.
  std::string large = R"({"event_id":"login")";
  for (int i = 0; i < 100000; ++i) large += ",\"f" + std::to_string(i) + "\":0";
  large += R"(,"items":[)";
  const auto items_at = large.size() - 1;
  while (large.size() < (8u << 20)) large += R"({"sku":"sku-00042","qty":1},)";
  large += "{}]}";
  JsonEvent event;
  std::string text;
  ASSERT_FALSE(event.parse(small));
  event.append_text(1, text);
  const auto before = hbingest::testing::heap_in_use();

  ASSERT_FALSE(event.parse(large));
  ASSERT_EQ(event.member_count(), 100002u);
  text.clear();
  event.append_text(100001, text);  // the minifier's buffer grows to the value as well
  EXPECT_EQ(text.size(), large.size() - items_at - 1);
  EXPECT_GT(hbingest::testing::heap_in_use(), before + (16u << 20)) << "the large event's buffers, while it is read";

  std::string().swap(text);  // (assigning an empty string would keep the capacity)
  ASSERT_FALSE(event.parse(small));
  event.append_text(1, text);
  EXPECT_EQ(text, R"([{"sku":"sku-00042","qty":1}])");
  EXPECT_LT(hbingest::testing::heap_in_use(), before + (1u << 20)) << "held after the large event";
}

TEST(JsonEvent, ParseFailuresSayWhy) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"a":1})"));
  const auto invalid = event.parse("{nope");
  ASSERT_TRUE(invalid);
  EXPECT_FALSE(invalid->not_an_object);
  EXPECT_EQ(invalid->message.rfind("not valid JSON: ", 0), 0u) << invalid->message;
  EXPECT_EQ(event.member_count(), 0u) << "a failed parse leaves no fields of the event before";
  EXPECT_EQ(event.field("a"), std::nullopt);
  const auto array = event.parse("[1,2]");
  ASSERT_TRUE(array);
  EXPECT_TRUE(array->not_an_object);
  ASSERT_FALSE(event.parse(std::string_view(R"({"a":2}trailing)", 7))) << "only the given bytes are read";
  EXPECT_EQ(event.field("a"), FieldValue{std::int64_t{2}});
}

TEST(JsonEvent, NestedValuesAreTheWrongTypeForEveryComponent) {
  JsonEvent event;
  ASSERT_FALSE(event.parse(R"({"v":{"id":1},"ts":[1700000000000]})"));
  const auto error = [&](const std::string& component) {
    const auto spec = KeySpec::from_yaml_text("components:\n  - " + component + "\n", "nested.yaml");
    std::string key;
    const auto err = spec.encode(event, {}, key);
    return err ? err->reason : std::string("encoded");
  };
  EXPECT_EQ(error("{type: field, field: v, width: 8}"), "wrong type (expected a string or integer)");
  EXPECT_EQ(error("{type: int, field: v, width: 8}"), "wrong type (expected an integer)");
  EXPECT_EQ(error("{type: hash, of: [field:v]}"), "wrong type (expected a string, integer or boolean)");
  EXPECT_EQ(error("{type: time, field: ts, format: binary}"), "wrong type (expected a time)");
}

}  // namespace
}  // namespace hbingest::event_formats
