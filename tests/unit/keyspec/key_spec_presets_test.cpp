// Worked examples of docs/keyspec.md, byte for byte, one per preset of the design notes.
#include <gtest/gtest.h>

#include <algorithm>

#include "hbingest/keyspec/key_spec.h"
#include "test_support.h"

namespace hbingest::keyspec {
namespace {

using testing::be64;
using testing::encode_or_throw;
using testing::from_hex;

constexpr std::uint64_t kMax = 9223372036854775807ULL;
constexpr std::int64_t kTs = 1700000000123;  // 2023-11-14T22:13:20.123Z

TEST(KeySpecPresets, EventsByTopicKeepsTwoTopicsRecordsApartWhereEventsCollides) {
  const MapEventFields login({{"event_id", std::string("login")}, {"ts", kTs}});
  KafkaMeta logins;
  logins.topic = "logins";
  logins.partition = 3;
  logins.offset = 42;
  KafkaMeta orders = logins;
  orders.topic = "orders";
  // The defect: the default key has no topic, so the same position in two topics is one row.
  const auto events = KeySpec::preset("events");
  EXPECT_EQ(encode_or_throw(events, login, logins), encode_or_throw(events, login, orders));

  const auto spec = KeySpec::preset("events_by_topic");
  const auto key = encode_or_throw(spec, login, logins);
  EXPECT_NE(key, encode_or_throw(spec, login, orders));
  // The events key with 4 bytes of xxh64(topic) before the partition: 62 bytes.
  const auto base = encode_or_throw(events, login, logins);
  ASSERT_EQ(key.size(), 62u);
  EXPECT_EQ(key.substr(0, 35), base.substr(0, 35)) << "salt, event and time as in `events`";
  EXPECT_EQ(key.substr(39), base.substr(35)) << "partition and offset as in `events`";
  const auto sk = spec.sort_key(key);
  ASSERT_TRUE(sk);
  EXPECT_EQ(*sk, (SortKey{kTs, 3, 42}));
  EXPECT_EQ(spec.split_keys().size(), 99u);
}

// The merge of the n-way reader compares the key from the time component on: for every preset
// that has one, exactly those bytes, and which way they run.
TEST(KeySpecPresets, MergeBytesRunFromTheTimeComponentToTheEnd) {
  const MapEventFields event({{"event_id", std::string("login")},
                              {"ts", kTs},
                              {"order_id", std::string("20231114000123")},
                              {"user_id", std::string("10086")},
                              {"user", std::string("alice")},
                              {"follows", std::string("bob")},
                              {"host", std::string("h1")},
                              {"event", std::string("login")}});
  KafkaMeta meta;
  meta.topic = "logins";
  meta.partition = 3;
  meta.offset = 42;
  for (const auto& name : KeySpec::preset_names()) {
    const auto spec = KeySpec::preset(name);
    const auto key = encode_or_throw(spec, event, meta);
    const auto merge = spec.merge_bytes(key);
    if (!spec.time_component()) {
      EXPECT_FALSE(merge) << name;
      continue;
    }
    const auto parts = spec.decode(key);
    const auto time =
        std::find_if(parts.begin(), parts.end(), [&](const KeyPart& p) { return p.name == *spec.time_component(); });
    ASSERT_NE(time, parts.end()) << name;
    ASSERT_TRUE(merge) << name;
    EXPECT_EQ(*merge, std::string_view(key).substr(time->begin)) << name;
    const bool reversed = name == "order_status" || name == "user_history" || name == "timeline";
    EXPECT_EQ(spec.time_descending(), reversed) << name;
  }
  EXPECT_THROW((void)KeySpec::preset("events").merge_bytes("14login"), DecodeError);
}

TEST(KeySpecPresets, Events) {
  const auto spec = KeySpec::preset("events");
  KafkaMeta meta;
  meta.partition = 3;
  meta.offset = 42;
  const auto key = encode_or_throw(spec, MapEventFields({{"event_id", std::string("login")}, {"ts", kTs}}), meta);
  // salt = xxh64(00000003 00 000000000000002a) % 100 = 14 (docs/keyspec.md works it out)
  EXPECT_EQ(key, std::string("14") + "login" + std::string(11, '\x01') + "20231114221320123" + "0003" +
                     "0000000000000000042");
  EXPECT_EQ(key.size(), 58u);
  const auto sk = spec.sort_key(key);
  ASSERT_TRUE(sk);
  EXPECT_EQ(*sk, (SortKey{kTs, 3, 42}));
  const auto parts = spec.decode(key);
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0].number, 14);
  EXPECT_EQ(parts[1].text, "login");
  EXPECT_EQ(parts[2].text, "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(parts[4].number, 42);
  EXPECT_EQ(spec.split_keys().size(), 99u);
  EXPECT_EQ(spec.split_keys().front(), "01");
  EXPECT_EQ(spec.split_keys().back(), "99");
}

TEST(KeySpecPresets, OrderStatus) {
  const auto spec = KeySpec::preset("order_status");
  const auto key = encode_or_throw(spec, MapEventFields({{"order_id", std::string("20231114000123")}, {"ts", kTs}}));
  EXPECT_EQ(key, std::string("32100041113202") + "\x01\x01" + from_hex("7ffffe74301a9784"));
  EXPECT_EQ(be64(kMax - kTs), from_hex("7ffffe74301a9784"));
}

TEST(KeySpecPresets, UserHistoryWithStartStopRowsForAPeriod) {
  const auto spec = KeySpec::preset("user_history");
  const auto key = encode_or_throw(spec, MapEventFields({{"user_id", std::string("10086")}, {"ts", kTs}}));
  const std::string user = std::string("68001") + std::string(7, '\x01');
  EXPECT_EQ(key, user + be64(kMax - kTs));
  // The notes: startRow = [reversed user][MAX - end], stopRow = [reversed user][MAX - start]. For
  // our half-open [from, to) that is start = MAX - (to - 1), stop = MAX - from + 1.
  const std::int64_t from = 1700000000000, to = 1700003600000;
  PlanRequest req;
  req.equals = {{"user", "10086"}};
  req.from_ms = from;
  req.to_ms = to;
  const auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start, user + be64(kMax - (to - 1)));
  EXPECT_EQ(ranges[0].stop, user + be64(kMax - from + 1));
  EXPECT_GE(key, ranges[0].start);
  EXPECT_LT(key, ranges[0].stop);
}

TEST(KeySpecPresets, Timeline) {
  const auto spec = KeySpec::preset("timeline");
  const auto key = encode_or_throw(spec, MapEventFields({{"user", std::string("alice")}, {"ts", kTs}}));
  EXPECT_EQ(key, from_hex("6384e2b2184bcbf58eccf10ca7a6563c") + be64(kMax - kTs));
  EXPECT_EQ(spec.decode(key)[0].text, "6384e2b2184bcbf58eccf10ca7a6563c");
  // A user's newest posts: the plan hashes the given user.
  PlanRequest req;
  req.equals = {{"user", "alice"}};
  const auto ranges = spec.plan(req);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start, from_hex("6384e2b2184bcbf58eccf10ca7a6563c"));
  EXPECT_EQ(ranges[0].stop, from_hex("6384e2b2184bcbf58eccf10ca7a6563d"));
}

TEST(KeySpecPresets, Follows) {
  const auto spec = KeySpec::preset("follows");
  const auto key =
      encode_or_throw(spec, MapEventFields({{"user", std::string("alice")}, {"follows", std::string("bob")}}));
  EXPECT_EQ(key, from_hex("6384e2b2184bcbf58eccf10ca7a6563c") + from_hex("9f9d51bc70ef21ca5c14f307980a29d8"));
  EXPECT_EQ(key.size(), 32u);
}

TEST(KeySpecPresets, ConsumptionReproduces003) {
  const auto spec = KeySpec::preset("consumption");
  // 003: zhagnsan, 2022-02-14 12:34:45 → partition hash(user + "02") % 10 + 10, padded to 3 digits.
  const auto key = encode_or_throw(
      spec, MapEventFields({{"user", std::string("zhagnsan")}, {"ts", std::string("2022-02-14T12:34:45.678Z")}}));
  EXPECT_EQ(key, std::string("013") + "2022-02" + "\x01\x01zhagnsan" + "-14 12:34:45 678");
  EXPECT_EQ(spec.salt_buckets(), 120);  // 12 months × 10
  // "Total spent by zhangsan in Dec 2021" is one scan; "by everyone in Dec 2021" one per region of the month.
  PlanRequest one;
  one.equals = {{"month", "2021-12"}, {"user", "zhangsan"}};
  const auto r1 = spec.plan(one);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].start, std::string("114") + "2021-12" + "\x01\x01zhangsan");
  EXPECT_EQ(r1[0].stop, std::string("114") + "2021-12" + "\x01\x01zhangsao");
  const auto dec = encode_or_throw(
      spec, MapEventFields({{"user", std::string("zhangsan")}, {"ts", std::string("2021-12-24T23:59:59.999Z")}}));
  EXPECT_GE(dec, r1[0].start);
  EXPECT_LT(dec, r1[0].stop);
  PlanRequest month;
  month.equals = {{"month", "2021-12"}};
  const auto r2 = spec.plan(month);
  ASSERT_EQ(r2.size(), 10u);
  EXPECT_EQ(r2[0].start, "1102021-12");
  EXPECT_EQ(r2[0].stop, "1102021-13");
  EXPECT_EQ(r2[9].start, "1192021-12");
}

TEST(KeySpecPresets, LogsAndLogsFixed) {
  const auto logs = KeySpec::preset("logs");
  const MapEventFields ev({{"host", std::string("web-1")}, {"event", std::string("disk_full")}, {"ts", kTs}});
  EXPECT_EQ(encode_or_throw(logs, ev), std::string("11") + be64(kTs) + std::string("web-1\0disk_full\0", 16));
  EXPECT_EQ(logs.event_component(), "event");
  PlanRequest req;
  req.from_ms = kTs;
  req.to_ms = kTs + 1000;
  EXPECT_EQ(logs.plan(req).size(), 16u);  // 004: one scan per bucket
  const auto fixed = KeySpec::preset("logs_fixed");
  EXPECT_EQ(encode_or_throw(fixed, ev),
            from_hex("a2e3a94e0befb3546bfea8a1cb24ac48afb36a57a11d355f918d3e4630b9365d") + be64(kTs));
}

}  // namespace
}  // namespace hbingest::keyspec

TEST(KeySpecLeadBucket, ReadsTheSaltWithoutDecodingTheRest) {
  const auto spec = hbingest::keyspec::KeySpec::preset("events");
  hbingest::keyspec::MapEventFields event({{"event_id", std::string("login")}, {"ts", std::int64_t{1700000000123}}});
  std::string key;
  for (std::int64_t offset = 0; offset < 200; ++offset) {
    ASSERT_FALSE(spec.encode(event, {"events", 3, offset, -1}, key));
    const auto parts = spec.decode(key);
    EXPECT_EQ(spec.lead_bucket(key), static_cast<int>(*parts[0].number));
  }
  EXPECT_FALSE(hbingest::keyspec::KeySpec::preset("timeline").lead_bucket(std::string(24, 'x')));
}
