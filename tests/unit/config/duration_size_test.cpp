#include <gtest/gtest.h>

#include <stdexcept>

#include "hbingest/config/duration.h"
#include "hbingest/config/size.h"

namespace hbingest::config {
namespace {

using namespace std::chrono_literals;

TEST(Duration, ParsesEveryUnit) {
  EXPECT_EQ(parse_duration("50ms"), 50ms);
  EXPECT_EQ(parse_duration("1s"), 1000ms);
  EXPECT_EQ(parse_duration("10m"), 600000ms);
  EXPECT_EQ(parse_duration("2h"), 7200000ms);
  EXPECT_EQ(parse_duration("1d"), 86400000ms);
  EXPECT_EQ(parse_duration("1h30m"), 5400000ms);
  EXPECT_EQ(parse_duration("1s500ms"), 1500ms);
  EXPECT_EQ(parse_duration("0"), 0ms);
}

TEST(Duration, RejectsBadText) {
  for (const char* bad : {"", "50", "5x", "ms", "-1s", "1.5s", "1 s", "1s ", "99999999999999999999s"}) {
    EXPECT_THROW(parse_duration(bad), std::invalid_argument) << bad;
  }
  try {
    parse_duration("5sec");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown unit 'sec'"), std::string::npos) << e.what();
  }
}

TEST(Duration, FormatRoundTrips) {
  EXPECT_EQ(format_duration(600000ms), "10m");
  EXPECT_EQ(format_duration(5400000ms), "1h30m");
  EXPECT_EQ(format_duration(250ms), "250ms");
  EXPECT_EQ(format_duration(0ms), "0");
  for (auto ms : {1ms, 999ms, 1001ms, 61000ms, 86400001ms, 3723004ms}) {
    EXPECT_EQ(parse_duration(format_duration(ms)), ms) << format_duration(ms);
  }
}

TEST(Size, ParsesUnits) {
  EXPECT_EQ(parse_size("1000"), 1000u);
  EXPECT_EQ(parse_size("512KiB"), 512u * 1024);
  EXPECT_EQ(parse_size("2MiB"), 2u * 1024 * 1024);
  EXPECT_EQ(parse_size("2 MiB"), 2u * 1024 * 1024);
  EXPECT_EQ(parse_size("1GiB"), 1024u * 1024 * 1024);
  EXPECT_EQ(parse_size("3MB"), 3000000u);
  EXPECT_EQ(parse_size("7B"), 7u);
}

TEST(Size, RejectsBadText) {
  for (const char* bad : {"", "MiB", "2mib", "2XB", "-1", "1.5MiB", "99999999999999999999", "20000000TiB"}) {
    EXPECT_THROW(parse_size(bad), std::invalid_argument) << bad;
  }
}

TEST(Size, FormatRoundTrips) {
  EXPECT_EQ(format_size(2 * 1024 * 1024), "2MiB");
  EXPECT_EQ(format_size(1536 * 1024), "1536KiB");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(0), "0");
  for (std::size_t v : {1ul, 1024ul, 1025ul, 1ul << 40, 3ul << 30}) EXPECT_EQ(parse_size(format_size(v)), v);
}

}  // namespace
}  // namespace hbingest::config
