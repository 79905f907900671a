// parse_field_path: the grammar row mappings, key spec fields and table templates name values
// inside an event with, and its bounds against hostile configuration.
#include <gtest/gtest.h>

#include <string>

#include "hbingest/event_formats/field_path.h"

namespace hbingest::event_formats {
namespace {

std::vector<PathStep> steps(const std::string& text) { return parse_field_path(text).steps; }

TEST(FieldPath, NamesAndIndexes) {
  EXPECT_EQ(steps("user_id"), (std::vector<PathStep>{{"user_id"}}));
  EXPECT_TRUE(parse_field_path("user_id").is_top_level());
  EXPECT_EQ(steps("payment.amount"), (std::vector<PathStep>{{"payment"}, {"amount"}}));
  EXPECT_FALSE(parse_field_path("payment.amount").is_top_level());
  EXPECT_EQ(steps("items[0].sku"), (std::vector<PathStep>{{"items"}, {{}, 0}, {"sku"}}));
  EXPECT_EQ(steps("m[2][10]"), (std::vector<PathStep>{{"m"}, {{}, 2}, {{}, 10}}));
  EXPECT_FALSE(parse_field_path("tags[2]").is_top_level());
  EXPECT_EQ(steps(R"(a\.b.c)"), (std::vector<PathStep>{{"a.b"}, {"c"}})) << "an escaped dot is part of a name";
  EXPECT_EQ(steps("caf\xc3\xa9 x-y"), (std::vector<PathStep>{{"caf\xc3\xa9 x-y"}})) << "any other byte is a name's";
  EXPECT_EQ(parse_field_path("items[0].sku").text, "items[0].sku");
}

TEST(FieldPath, WhatIsNotAPathSaysWhereAndWhy) {
  for (const char* text :
       {"", ".a", "a.", "a..b", "[0]", "a[", "a[]", "a[x]", "a[-1]", "a[1x]", "a]", "a[0]b", "a[0x10]", "a[ 1]"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(parse_field_path(text), FieldPathError);
  }
  try {
    parse_field_path("a[x]");
    FAIL();
  } catch (const FieldPathError& e) {
    EXPECT_NE(std::string(e.what()).find("at byte 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("array index"), std::string::npos) << e.what();
  }
}

TEST(FieldPath, AnIndexOfTwoToThe62ParsesAndOneAboveSizeTIsRefused) {
  EXPECT_EQ(steps("a[4611686018427387904]").back().index, std::size_t{1} << 62);
  EXPECT_THROW(parse_field_path("a[18446744073709551616]"), FieldPathError) << "2^64 does not fit";
}

TEST(FieldPath, AHostilePathIsRefusedNotWalked) {
  std::string deep = "a";
  for (int i = 0; i < 10'000; ++i) deep += ".a";
  EXPECT_THROW(parse_field_path(deep), FieldPathError) << "10,000 steps";
  std::string indexes = "a";
  for (int i = 0; i < 10'000; ++i) indexes += "[0]";
  EXPECT_THROW(parse_field_path(indexes), FieldPathError);

  // The step bound on its own (a path short in bytes): kMaxPathSteps steps are read, one more is not.
  std::string at_bound = "a";
  for (std::size_t i = 1; i < kMaxPathSteps; ++i) at_bound += "[0]";
  EXPECT_EQ(parse_field_path(at_bound).steps.size(), kMaxPathSteps);
  try {
    parse_field_path(at_bound + "[0]");
    FAIL();
  } catch (const FieldPathError& e) {
    EXPECT_NE(std::string(e.what()).find("more than " + std::to_string(kMaxPathSteps) + " steps"), std::string::npos)
        << e.what();
  }
  // The byte bound: one long name.
  EXPECT_NO_THROW(parse_field_path(std::string(kMaxPathBytes, 'n')));
  EXPECT_THROW(parse_field_path(std::string(kMaxPathBytes + 1, 'n')), FieldPathError);
}

}  // namespace
}  // namespace hbingest::event_formats
