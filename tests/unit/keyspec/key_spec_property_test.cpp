// Properties over random events: round trip, byte order = tuple order, exact plans, salt spread.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "hbingest/keyspec/key_spec.h"
#include "test_support.h"

namespace hbingest::keyspec {
namespace {

using testing::encode_or_throw;

struct Event {
  std::string id;
  std::int64_t ts;
  std::int32_t partition;
  std::int64_t offset;
};

std::string random_id(std::mt19937_64& rng, std::size_t max_len) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz_0123456789";
  const std::size_t n = 1 + rng() % max_len;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += kChars[rng() % (sizeof kChars - 1)];
  return s;
}

std::vector<Event> random_events(std::mt19937_64& rng, int count, const std::vector<std::string>& ids,
                                 std::int64_t ts_lo, std::int64_t ts_span) {
  std::vector<Event> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(Event{ids[rng() % ids.size()],
                        ts_lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(ts_span)),
                        static_cast<std::int32_t>(rng() % 12), static_cast<std::int64_t>(rng() % 1000000)});
  }
  return out;
}

std::string encode_event(const KeySpec& spec, const Event& e) {
  KafkaMeta meta;
  meta.partition = e.partition;
  meta.offset = e.offset;
  return encode_or_throw(spec, MapEventFields({{"event_id", e.id}, {"ts", e.ts}}), meta);
}

// Specs with the events layout in each encoding the planner must handle.
std::vector<KeySpec> layouts() {
  return {
      KeySpec::preset("events", {{"buckets", "8"}}),
      KeySpec::from_yaml_text("components:\n  - {type: salt, buckets: 5, encoding: binary}\n"
                              "  - {name: event, type: field, field: event_id, width: 12}\n"
                              "  - {name: time, type: time, field: ts, format: binary}\n"
                              "  - {type: partition, encoding: binary}\n  - {type: offset, encoding: binary}\n",
                              "binary"),
      KeySpec::from_yaml_text("components:\n  - {type: salt, buckets: 3}\n"
                              "  - {name: event, type: field, field: event_id, terminator: \"\\0\"}\n"
                              "  - {name: time, type: time, field: ts, format: decimal}\n"
                              "  - {type: partition}\n  - {type: offset}\n",
                              "terminated"),
  };
}

KeySpec reversed_layout() {
  return KeySpec::from_yaml_text(
      "components:\n  - {type: salt, buckets: 4}\n"
      "  - {name: event, type: field, field: event_id, width: 12}\n"
      "  - {name: time, type: time, field: ts, reversed: true}\n"
      "  - {type: partition}\n  - {type: offset}\n",
      "reversed");
}

TEST(KeySpecProperty, DecodeOfEncodeGivesTheEventsParts) {
  std::mt19937_64 rng(1);
  for (const auto& spec : layouts()) {
    for (int i = 0; i < 2000; ++i) {
      // From 1e11: smaller integers read as seconds under the presets' `input: auto`.
      const Event e{random_id(rng, 12), 100000000000 + static_cast<std::int64_t>(rng() % 4000000000000ULL),
                    static_cast<std::int32_t>(rng() % 9999), static_cast<std::int64_t>(rng() >> 2)};
      const auto key = encode_event(spec, e);
      const auto parts = spec.decode(key);
      ASSERT_EQ(parts.size(), 5u);
      EXPECT_EQ(parts[1].text, e.id) << spec.source_name();
      EXPECT_EQ(parts[2].number, e.ts);
      EXPECT_EQ(parts[3].number, e.partition);
      EXPECT_EQ(parts[4].number, e.offset);
      EXPECT_EQ(parts.back().end, key.size());
      EXPECT_EQ(spec.sort_key(key), (SortKey{e.ts, e.partition, e.offset}));
    }
  }
}

TEST(KeySpecProperty, ByteOrderWithinABucketIsTupleOrder) {
  std::mt19937_64 rng(2);
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(random_id(rng, 12));
  auto check = [&](const KeySpec& spec, bool reversed) {
    const auto events = random_events(rng, 3000, ids, 1600000000000, 100000);
    std::vector<std::pair<std::string, Event>> keyed;
    for (const auto& e : events) keyed.emplace_back(encode_event(spec, e), e);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < keyed.size(); ++i) {
      const auto& [ka, a] = keyed[i - 1];
      const auto& [kb, b] = keyed[i];
      if (spec.decode(ka)[0].number != spec.decode(kb)[0].number) continue;  // order holds within one bucket
      const auto ta = std::make_tuple(a.id, reversed ? -a.ts : a.ts, a.partition, a.offset);
      const auto tb = std::make_tuple(b.id, reversed ? -b.ts : b.ts, b.partition, b.offset);
      ASSERT_LE(ta, tb) << spec.source_name() << ": " << testing::to_hex(ka) << " vs " << testing::to_hex(kb);
    }
  };
  for (const auto& spec : layouts()) check(spec, false);
  check(reversed_layout(), true);
}

TEST(KeySpecProperty, PlansAreExact) {
  std::mt19937_64 rng(3);
  // Ids that are prefixes of each other probe the padding/terminator bounds.
  const std::vector<std::string> ids = {"log", "login", "logi", "order", "o", "zz"};
  auto specs = layouts();
  specs.push_back(reversed_layout());
  for (const auto& spec : specs) {
    const auto events = random_events(rng, 2000, ids, 1700000000000, 50000);
    std::vector<std::string> keys;
    for (const auto& e : events) keys.push_back(encode_event(spec, e));
    for (int trial = 0; trial < 40; ++trial) {
      PlanRequest req;
      const std::string& id = ids[rng() % ids.size()];
      req.equals = {{"event", id}};
      const int shape = trial % 4;  // both ends, from only, to only, prefix only
      const std::int64_t a = 1700000000000 + static_cast<std::int64_t>(rng() % 50000);
      const std::int64_t b = a + 1 + static_cast<std::int64_t>(rng() % 20000);
      if (shape == 0 || shape == 1) req.from_ms = a;
      if (shape == 0 || shape == 2) req.to_ms = b;
      const auto ranges = spec.plan(req);
      for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        const bool want = e.id == id && (!req.from_ms || e.ts >= *req.from_ms) && (!req.to_ms || e.ts < *req.to_ms);
        const auto hits = std::count_if(ranges.begin(), ranges.end(), [&](const ScanRange& r) {
          return keys[i] >= r.start && (r.stop.empty() || keys[i] < r.stop);
        });
        ASSERT_EQ(hits, want ? 1 : 0) << spec.source_name() << " trial " << trial << " id " << id << " event " << e.id
                                      << "@" << e.ts;
      }
    }
    // The whole table: every key in exactly one split.
    const auto splits = spec.plan_full_table(3);
    for (const auto& k : keys) {
      const auto hits = std::count_if(splits.begin(), splits.end(), [&](const ScanRange& r) {
        return k >= r.start && (r.stop.empty() || k < r.stop);
      });
      ASSERT_EQ(hits, 1);
    }
  }
}

TEST(KeySpecProperty, SaltIsNearUniformForSequentialOffsets) {
  const auto spec = KeySpec::preset("events");
  std::vector<int> counts(100, 0);
  const int per_partition = 25000;
  for (std::int32_t p = 0; p < 4; ++p) {
    for (std::int64_t o = 0; o < per_partition; ++o) {
      KafkaMeta meta;
      meta.partition = p;
      meta.offset = o;
      const auto key =
          encode_or_throw(spec, MapEventFields({{"event_id", std::string("e")}, {"ts", std::int64_t{0}}}), meta);
      ++counts[static_cast<std::size_t>(std::stoi(key.substr(0, 2)))];
    }
  }
  const double expected = 4.0 * per_partition / 100;
  double chi2 = 0;
  for (const int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  // 99 degrees of freedom: P(chi2 > 148.2) = 0.001 for a uniform hash.
  EXPECT_LT(chi2, 148.2);
}

}  // namespace
}  // namespace hbingest::keyspec
