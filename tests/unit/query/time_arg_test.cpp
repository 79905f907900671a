#include "hbingest/query/time_arg.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace hbingest::query {
namespace {

TEST(TimeArgTest, AcceptsEpochMillisAndRfc3339) {
  EXPECT_EQ(parse_time_arg("1714564800000"), 1714564800000);
  EXPECT_EQ(parse_time_arg("-5"), -5);
  EXPECT_EQ(parse_time_arg("2024-05-01T12:00:00Z"), 1714564800000);
  EXPECT_EQ(parse_time_arg("2024-05-01t12:00:00.25z"), 1714564800250);
  EXPECT_EQ(parse_time_arg("2024-05-01T14:00:00.123456+02:00"), 1714564800123);
  EXPECT_EQ(parse_time_arg("2024-05-01T11:30:00-00:30"), 1714564800000);
  EXPECT_EQ(parse_time_arg("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_time_arg("2024-02-29T00:00:00Z"), 1709164800000);
}

TEST(TimeArgTest, RejectsMalformedTimes) {
  for (const char* bad : {"", "yesterday", "2024-05-01", "2024-05-01T12:00:00", "2024-05-01T12:00Z",
                          "2023-02-29T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:00:00.Z",
                          "2024-05-01T12:00:00+2:00", "2024-05-01T12:00:00Zjunk", "12-3", "99999999999999999999"}) {
    EXPECT_THROW(parse_time_arg(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace hbingest::query
