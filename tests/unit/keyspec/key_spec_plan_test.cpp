// Scan planning: ranges per bucket, reversed time, prefix-only, whole table, rejections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hbingest/keyspec/key_spec.h"
#include "test_support.h"

namespace hbingest::keyspec {
namespace {

using ::testing::HasSubstr;

std::string plan_error(const KeySpec& spec, const PlanRequest& req) {
  try {
    spec.plan(req);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(KeySpecPlan, EventIdAndTimeRangeGivesOneRangePerBucket) {
  const auto spec = KeySpec::preset("events");
  PlanRequest req;
  req.equals = {{"event", "login"}};
  req.from_ms = 1700000000000;
  req.to_ms = 1700000000123;
  const auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 100u);
  const std::string ev = std::string("login") + std::string(11, '\x01');
  EXPECT_EQ(ranges[7].bucket, 7);
  EXPECT_EQ(ranges[7].start, "07" + ev + "20231114221320000");
  EXPECT_EQ(ranges[7].stop, "07" + ev + "20231114221320123");
}

TEST(KeySpecPlan, PrefixOnlyAndOpenEnds) {
  const auto spec = KeySpec::preset("events");
  PlanRequest req;
  req.equals = {{"event", "login"}};
  auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 100u);
  const std::string ev = std::string("login") + std::string(11, '\x01');
  EXPECT_EQ(ranges[99].start, "99" + ev);
  EXPECT_EQ(ranges[99].stop, "99" + std::string("login") + std::string(10, '\x01') + "\x02");
  req.from_ms = 1700000000000;  // open end: up to the end of the event prefix
  ranges = spec.plan(req);
  EXPECT_EQ(ranges[0].stop, "00" + std::string("login") + std::string(10, '\x01') + "\x02");
}

TEST(KeySpecPlan, SaltEqualityNarrowsToOneBucket) {
  const auto spec = KeySpec::preset("events");
  PlanRequest req;
  req.equals = {{"salt", "42"}, {"event", "login"}};
  const auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].bucket, 42);
}

TEST(KeySpecPlan, FullTableAndSplitKeys) {
  const auto spec = KeySpec::preset("events");
  auto ranges = spec.plan_full_table(4);
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0].start, "");
  EXPECT_EQ(ranges[0].stop, "25");
  EXPECT_EQ(ranges[1].start, "25");
  EXPECT_EQ(ranges[3].stop, "");
  EXPECT_EQ(spec.plan_full_table(1000).size(), 100u);
  EXPECT_THROW(spec.plan_full_table(0), SpecError);
  const auto unsalted = KeySpec::preset("timeline");
  ranges = unsalted.plan_full_table(2);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].stop, std::string(1, '\x80'));
  EXPECT_EQ(ranges[1].start, std::string(1, '\x80'));
  EXPECT_TRUE(unsalted.split_keys().empty());
}

TEST(KeySpecPlan, RangeAfterHashOfUnknownInputIsRejected) {
  const auto spec = KeySpec::preset("timeline");
  PlanRequest req;
  req.from_ms = 1;
  req.to_ms = 2;
  EXPECT_THAT(plan_error(spec, req), HasSubstr("comes after hash component 'user' of md5(field:user)"));
  req.equals = {{"user", "alice"}};
  EXPECT_EQ(spec.plan(req).size(), 1u);
}

TEST(KeySpecPlan, BadRequests) {
  const auto spec = KeySpec::preset("events");
  PlanRequest req;
  req.equals = {{"partition", "3"}};
  EXPECT_THAT(plan_error(spec, req), HasSubstr("equality on 'partition' is not part of the leading run"));
  req.equals = {{"nope", "3"}};
  EXPECT_THAT(plan_error(spec, req), HasSubstr("no component or event field"));
  req.equals = {};
  req.from_ms = 10;
  req.to_ms = 10;
  EXPECT_THAT(plan_error(spec, req), HasSubstr("empty time range"));
  req.from_ms = 1;
  req.to_ms = 2;
  EXPECT_THAT(plan_error(spec, req), HasSubstr("'event' has none"));
  req.equals = {{"event", "much_too_long_event_id"}};
  EXPECT_THAT(plan_error(spec, req), HasSubstr("too long for width 16"));
  req.equals = {{"salt", "100"}};
  req.from_ms.reset();
  req.to_ms.reset();
  EXPECT_THAT(plan_error(spec, req), HasSubstr("[0, 100)"));
}

TEST(KeySpecPlan, ReversedRangeFlips) {
  const auto spec = KeySpec::from_yaml_text(
      "components:\n  - {name: u, type: field, field: u, width: 2}\n  - {name: t, type: time, field: ts, reversed: "
      "true, format: decimal}\n",
      "t");
  PlanRequest req;
  req.equals = {{"u", "ab"}};
  req.from_ms = 100;
  req.to_ms = 200;
  const auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start, "ab" + std::to_string(9223372036854775807LL - 199));
  EXPECT_EQ(ranges[0].stop, "ab" + std::to_string(9223372036854775807LL - 99));
  req.from_ms = 0;  // lower end at the representable minimum: stop is the prefix's end
  EXPECT_EQ(spec.plan(req)[0].stop, "ac");
}

}  // namespace
}  // namespace hbingest::keyspec
