// Tests of hbingest::support: rate-limited logging and host:port parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <stdexcept>

#include "hbingest/support/host_port.h"
#include "hbingest/support/rate_limited_log.h"

namespace hbingest::support {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(HostPort, ParsesNamesIPv4AndBracketedIPv6) {
  const auto name = parse_host_port("gateway.example:9090");
  EXPECT_EQ(name.host, "gateway.example");
  EXPECT_EQ(name.port, 9090);
  EXPECT_EQ(parse_host_port("127.0.0.1:1").host, "127.0.0.1");
  const auto v6 = parse_host_port("[::1]:8080");
  EXPECT_EQ(v6.host, "::1");  // without brackets: getaddrinfo does not take them
  EXPECT_EQ(v6.port, 8080);
  EXPECT_EQ(parse_host_port("[fe80::1%eth0]:9090").host, "fe80::1%eth0");
  EXPECT_EQ(parse_host_port("0.0.0.0:0", 0).port, 0);
}

TEST(HostPort, RejectsWithTheReason) {
  const auto message = [](std::string_view text, int min_port = 1) {
    try {
      parse_host_port(text, min_port);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message("localhost"), HasSubstr("no port"));
  EXPECT_THAT(message(":9090"), HasSubstr("empty host"));
  EXPECT_THAT(message("[]:9090"), HasSubstr("empty host"));
  EXPECT_THAT(message("::1:9090"), HasSubstr("brackets"));
  EXPECT_THAT(message("host:"), HasSubstr("1..65535"));
  EXPECT_THAT(message("host:99999"), HasSubstr("1..65535"));
  EXPECT_THAT(message("host:0"), HasSubstr("1..65535"));
  EXPECT_THAT(message("host:9x"), HasSubstr("'host:9x'"));
  EXPECT_EQ(message("host:0", 0), "accepted");
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
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
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
}  // namespace hbingest::support
