// keyspec::JsonEvent: the field view the daemon and `hbingest key build` share (docs/keyspec.md,
// "Event fields").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hbingest/keyspec/json_event.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {
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
}  // namespace hbingest::keyspec
