#include "hbingest/connectors/event_generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

namespace hbingest::connectors {
namespace {

using nlohmann::json;

constexpr std::int64_t kNow = 1'764'000'000'000;

std::vector<GeneratedEvent> generate(const EventGeneratorOptions& options, int n, std::int64_t now = kNow) {
  EventGenerator gen(options);
  std::vector<GeneratedEvent> out;
  for (int i = 0; i < n; ++i) out.push_back(gen.next(now + i));
  return out;
}

TEST(EventGenerator, SameSeedSameEvents) {
  EventGeneratorOptions options;
  options.seed = 42;
  options.invalid_fraction = 0.3;
  options.time_spread = std::chrono::minutes(10);
  const auto a = generate(options, 2000);
  const auto b = generate(options, 2000);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << i;
    EXPECT_EQ(a[i].key, b[i].key) << i;
    EXPECT_EQ(a[i].payload, b[i].payload) << i;
    EXPECT_EQ(a[i].ts_ms, b[i].ts_ms) << i;
  }
}

TEST(EventGenerator, DifferentSeedsDiffer) {
  EventGeneratorOptions options;
  options.seed = 1;
  const auto a = generate(options, 50);
  options.seed = 2;
  const auto b = generate(options, 50);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i].payload == b[i].payload ? 1 : 0;
  EXPECT_LT(same, 5);
}

TEST(EventGenerator, ValidLoginAndOrderShape) {
  EventGeneratorOptions options;
  options.seed = 7;
  const std::regex user_re("u[0-9]{6}");
  const std::regex ip_re("10\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}");
  const std::set<std::string> statuses = {"created", "paid", "shipped", "cancelled"};
  const std::set<std::string> devices = {"ios", "android", "web", "desktop"};
  int logins = 0;
  int orders = 0;
  std::set<std::string> seen_status;
  for (const auto& ev : generate(options, 3000)) {
    ASSERT_TRUE(ev.valid());
    const json j = json::parse(ev.payload);
    ASSERT_TRUE(j.is_object()) << ev.payload;
    EXPECT_EQ(j.at("ts").get<std::int64_t>(), ev.ts_ms);
    const auto user = j.at("user_id").get<std::string>();
    EXPECT_TRUE(std::regex_match(user, user_re)) << user;
    ASSERT_TRUE(ev.key.has_value());
    EXPECT_EQ(*ev.key, user);
    if (ev.kind == EventKind::kLogin) {
      ++logins;
      EXPECT_EQ(j.at("event_id"), "login");
      EXPECT_TRUE(std::regex_match(j.at("ip").get<std::string>(), ip_re)) << ev.payload;
      EXPECT_TRUE(devices.contains(j.at("device").get<std::string>())) << ev.payload;
      EXPECT_TRUE(j.at("success").is_boolean());
      EXPECT_EQ(j.size(), 6u) << ev.payload;
    } else {
      ASSERT_EQ(ev.kind, EventKind::kOrder);
      ++orders;
      EXPECT_EQ(j.at("event_id"), "order");
      EXPECT_EQ(j.at("order_id").get<std::string>().front(), 'o');
      const double amount = j.at("amount").get<double>();
      EXPECT_GE(amount, 1.0);
      EXPECT_LE(amount, 500.0);
      EXPECT_NEAR(amount * 100.0, std::round(amount * 100.0), 1e-6) << "amount has more than 2 decimals";
      EXPECT_EQ(j.at("currency").get<std::string>().size(), 3u);
      const auto status = j.at("status").get<std::string>();
      EXPECT_TRUE(statuses.contains(status)) << status;
      seen_status.insert(status);
      ASSERT_TRUE(j.at("items").is_array());
      ASSERT_FALSE(j.at("items").empty());
      for (const auto& item : j.at("items")) {
        EXPECT_EQ(item.at("sku").get<std::string>().rfind("sku-", 0), 0u);
        EXPECT_GE(item.at("qty").get<int>(), 1);
      }
    }
  }
  // order_fraction 0.4 over 3000 events: well inside [0.35, 0.45] for any fair generator.
  EXPECT_GT(orders, 3000 * 0.35);
  EXPECT_LT(orders, 3000 * 0.45);
  EXPECT_EQ(logins + orders, 3000);
  EXPECT_EQ(seen_status, statuses);
}

TEST(EventGenerator, TimeIsNowOrWithinSpread) {
  EventGeneratorOptions options;
  {
    EventGenerator gen(options);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(gen.next(kNow + i).ts_ms, kNow + i);
  }
  options.time_spread = std::chrono::minutes(10);
  EventGenerator gen(options);
  std::set<std::int64_t> distinct;
  for (int i = 0; i < 1000; ++i) {
    const auto ev = gen.next(kNow);
    EXPECT_LE(ev.ts_ms, kNow);
    EXPECT_GE(ev.ts_ms, kNow - 600'000);
    distinct.insert(ev.ts_ms);
  }
  EXPECT_GT(distinct.size(), 900u);
}

TEST(EventGenerator, UserIdsAreSkewed) {
  EventGeneratorOptions options;
  options.users = 100000;
  std::map<std::string, int> per_user;
  const int n = 20000;
  for (const auto& ev : generate(options, n)) ++per_user[*ev.key];
  std::vector<int> counts;
  for (const auto& [user, c] : per_user) counts.push_back(c);
  std::sort(counts.rbegin(), counts.rend());
  // Uniform over 100000 users would give the top 1000 users ~1% of events; Zipf(1.1) ~75%.
  int top = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(1000, counts.size()); ++i) top += counts[i];
  EXPECT_GT(top, n / 2);
  // And the most active user is not simply u000000.
  const auto most = std::max_element(per_user.begin(), per_user.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_NE(most->first, "u000000");
}

TEST(EventGenerator, InvalidFractionZeroAndOne) {
  EventGeneratorOptions options;
  options.invalid_fraction = 0.0;
  for (const auto& ev : generate(options, 1000)) EXPECT_TRUE(ev.valid());
  options.invalid_fraction = 1.0;
  for (const auto& ev : generate(options, 1000)) EXPECT_FALSE(ev.valid());
}

TEST(EventGenerator, InvalidShareMatchesFraction) {
  EventGeneratorOptions options;
  options.invalid_fraction = 0.2;
  int invalid = 0;
  for (const auto& ev : generate(options, 10000)) invalid += ev.valid() ? 0 : 1;
  EXPECT_GT(invalid, 1700);
  EXPECT_LT(invalid, 2300);
}

TEST(EventGenerator, EachInvalidKindIsInvalidTheWayItSays) {
  EventGeneratorOptions options;
  options.invalid_fraction = 1.0;
  std::map<EventKind, int> seen;
  for (const auto& ev : generate(options, 1200)) {
    ++seen[ev.kind];
    const json j = json::parse(ev.payload, nullptr, /*allow_exceptions=*/false);
    switch (ev.kind) {
      case EventKind::kBadJson:
      case EventKind::kBinaryGarbage:
        EXPECT_TRUE(j.is_discarded()) << to_string(ev.kind) << ": " << ev.payload;
        break;
      case EventKind::kMissingEventId:
        ASSERT_TRUE(j.is_object());
        EXPECT_FALSE(j.contains("event_id"));
        EXPECT_TRUE(j.contains("ts"));
        break;
      case EventKind::kMissingTs:
        ASSERT_TRUE(j.is_object());
        EXPECT_TRUE(j.contains("event_id"));
        EXPECT_FALSE(j.contains("ts"));
        break;
      case EventKind::kOverlongEventId:
        ASSERT_TRUE(j.is_object());
        EXPECT_EQ(j.at("event_id").get<std::string>().size(), EventGenerator::kOverlongEventIdLength);
        break;
      case EventKind::kUnknownType: {
        ASSERT_TRUE(j.is_object());
        const auto type = j.at("event_id").get<std::string>();
        EXPECT_NE(type, "login");
        EXPECT_NE(type, "order");
        break;
      }
      case EventKind::kLogin:
      case EventKind::kOrder:
        ADD_FAILURE() << "valid event with invalid_fraction 1";
        break;
    }
  }
  EXPECT_EQ(seen.size(), 6u);
  for (const auto& [kind, count] : seen) EXPECT_GT(count, 100) << to_string(kind);
  EXPECT_FALSE(seen.contains(EventKind::kLogin));
}

TEST(EventGenerator, RejectsOutOfRangeOptionsNamingThem) {
  const auto expect_error = [](EventGeneratorOptions options, const std::string& name) {
    try {
      EventGenerator gen(options);
      ADD_FAILURE() << "accepted bad " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  EventGeneratorOptions bad;
  bad.invalid_fraction = 1.5;
  expect_error(bad, "invalid_fraction");
  bad = {};
  bad.order_fraction = -0.1;
  expect_error(bad, "order_fraction");
  bad = {};
  bad.users = 0;
  expect_error(bad, "users");
  bad = {};
  bad.zipf_exponent = 0;
  expect_error(bad, "zipf_exponent");
  bad = {};
  bad.time_spread = std::chrono::milliseconds(-1);
  expect_error(bad, "time_spread");
}

}  // namespace
}  // namespace hbingest::connectors
