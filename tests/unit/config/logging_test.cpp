// Tests daemon/src/logging.cpp (compiled into this test directly; see CMakeLists.txt).
#include <gtest/gtest.h>
#include <gmock/gmock.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "hbingest/daemon/logging.h"

namespace hbingest::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Logging, JsonLinesEscapeEverything) {
  std::ostringstream out;
  setup_logging({.level = "info", .format = config::LogFormat::json},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::info("write failed: \"quoted\"\nsecond line\tand \\ backslash");
  spdlog::warn("bad byte \xff here");
  spdlog::debug("not shown at info");
  spdlog::default_logger()->flush();
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["level"], "info");
  EXPECT_EQ(first["logger"], "hbingest");
  EXPECT_EQ(first["msg"], "write failed: \"quoted\"\nsecond line\tand \\ backslash");
  EXPECT_TRUE(first["thread"].is_number());
  const std::string ts = first["ts"];
  EXPECT_EQ(ts.size(), 24u) << ts;  // 2024-05-01T12:00:00.123Z
  EXPECT_EQ(ts.back(), 'Z');
  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["level"], "warning");
  EXPECT_THAT(second["msg"].get<std::string>(), HasSubstr("bad byte "));
}

TEST(Logging, TextFormatAndLevelChanges) {
  std::ostringstream out;
  setup_logging({.level = "warn", .format = config::LogFormat::text},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::info("hidden at warn");
  spdlog::error("shown at warn");
  set_log_level("debug");  // what SIGHUP does after re-reading logging.level
  spdlog::debug("shown after reload");
  spdlog::default_logger()->flush();
  const std::string text = out.str();
  EXPECT_THAT(text, Not(HasSubstr("hidden at warn")));
  EXPECT_THAT(text, HasSubstr("error [hbingest]"));
  EXPECT_THAT(text, HasSubstr("shown at warn"));
  EXPECT_THAT(text, HasSubstr("shown after reload"));
  EXPECT_THROW(set_log_level("verbose"), std::invalid_argument);
  EXPECT_THROW(setup_logging({.level = "loud", .format = config::LogFormat::text},
                             std::make_shared<spdlog::sinks::ostream_sink_mt>(out)),
               std::invalid_argument);
}

TEST(RateLimitedLog, SuppressesRepeatsAndCountsThem) {
  auto now = std::chrono::steady_clock::time_point{};
  RateLimitedLog limiter(std::chrono::seconds(10), [&] { return now; });
  EXPECT_EQ(limiter.admit("hbase:h1"), 0u);
  EXPECT_EQ(limiter.admit("hbase:h2"), 0u);  // keys are independent
  for (int i = 0; i < 41; ++i) {
    now += std::chrono::milliseconds(100);
    EXPECT_EQ(limiter.admit("hbase:h1"), std::nullopt);
  }
  now += std::chrono::seconds(10);
  EXPECT_EQ(limiter.admit("hbase:h1"), 41u);
  EXPECT_EQ(limiter.admit("hbase:h1"), std::nullopt);
  now += std::chrono::seconds(10);
  EXPECT_EQ(limiter.admit("hbase:h1"), 1u);
}

TEST(RateLimitedLog, LogsTheSuppressedCount) {
  std::ostringstream out;
  setup_logging({.level = "info", .format = config::LogFormat::text},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  auto now = std::chrono::steady_clock::time_point{};
  RateLimitedLog limiter(std::chrono::seconds(10), [&] { return now; });
  for (int i = 0; i < 5; ++i) limiter.log(spdlog::level::err, "k", "thrift write failed");
  now += std::chrono::seconds(11);
  limiter.log(spdlog::level::err, "k", "thrift write failed");
  spdlog::default_logger()->flush();
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  EXPECT_THAT(lines[0], Not(HasSubstr("suppressed")));
  EXPECT_THAT(lines[1], HasSubstr("thrift write failed (4 repeats suppressed; logged at most every 10s)"));
}

TEST(RateLimitedLog, KeySpaceIsBounded) {
  auto now = std::chrono::steady_clock::time_point{};
  RateLimitedLog limiter(std::chrono::seconds(1), [&] { return now; });
  for (std::size_t i = 0; i < RateLimitedLog::kMaxKeys; ++i) limiter.admit("key" + std::to_string(i));
  now += std::chrono::seconds(2);
  limiter.admit("recent");  // forgets the idle keys
  EXPECT_EQ(limiter.admit("recent"), std::nullopt);
  EXPECT_EQ(limiter.admit("key0"), 0u);  // forgotten, so admitted as new
}

}  // namespace
}  // namespace hbingest::daemon
