// Tests of hbingest::support: did-you-mean suggestions, rate-limited logging and host:port parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <stdexcept>

#include "hbingest/support/did_you_mean.h"
#include "hbingest/support/host_port.h"
#include "hbingest/support/rate_limited_log.h"
#include "text_lines.h"

namespace hbingest::support {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using hbingest::testing::lines_of;

TEST(EditDistance, CountsEditsAndAdjacentTranspositionsIgnoringCase) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("width", ""), 5u);
  EXPECT_EQ(edit_distance("width", "width"), 0u);
  EXPECT_EQ(edit_distance("WIDTH", "width"), 0u);
  EXPECT_EQ(edit_distance("widht", "width"), 1u);  // one transposition, not two substitutions
  EXPECT_EQ(edit_distance("wdth", "width"), 1u);
  EXPECT_EQ(edit_distance("feild", "field"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // optimal string alignment: no edit of a transposed pair
}

TEST(DidYouMean, SuggestsThePlausibleTypoOnly) {
  const std::vector<std::string> keys{"bootstrap_servers", "poll_batch", "width", "epoch_s", "epoch_ms"};
  EXPECT_EQ(did_you_mean("widht", keys), " (did you mean 'width'?)");
  EXPECT_EQ(did_you_mean("pol_batch", keys), " (did you mean 'poll_batch'?)");
  EXPECT_EQ(did_you_mean("bootstrap_server", keys), " (did you mean 'bootstrap_servers'?)");
  EXPECT_EQ(did_you_mean("epoch_sec", keys), " (did you mean 'epoch_s'?)");  // 2 edits; epoch_ms is 3
  EXPECT_EQ(did_you_mean("Width", keys), " (did you mean 'width'?)");        // case only: keys are case-sensitive
  EXPECT_EQ(did_you_mean("colour", keys), "");
  EXPECT_EQ(did_you_mean("", keys), "");
  EXPECT_EQ(did_you_mean("widht", {}), "");
}

TEST(DidYouMean, AllowsMoreEditsForLongerWords) {
  const std::vector<std::string> keys{"max_inflight_rows_per_partition", "width", "ab"};
  EXPECT_EQ(closest_match("wid", keys), "width");               // 2 edits: the most a short word gets
  EXPECT_EQ(closest_match("wi", keys), std::nullopt);           // 3 edits
  EXPECT_EQ(closest_match("max_inflight_rows_per_part", keys),  // 5 edits, within a third of 26 characters
            "max_inflight_rows_per_partition");
  EXPECT_EQ(closest_match("max_rows", keys), std::nullopt);
  // Never a suggestion that is a complete rewrite: "xy" is 2 edits from "ab" but shares nothing.
  EXPECT_EQ(closest_match("xy", keys), std::nullopt);
  EXPECT_EQ(closest_match("ax", keys), "ab");
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

TEST(HostPort, LoopbackHostsAreOnlyThoseUnreachableFromTheNetwork) {
  for (const char* host : {"127.0.0.1", "127.8.9.10", "::1", "localhost"}) EXPECT_TRUE(is_loopback_host(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example.com", "", "127.0.0.1.example"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
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
