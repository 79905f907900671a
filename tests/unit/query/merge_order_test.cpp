// The time-ordered merge must take every range's rows in the order the scan returns them, for
// every preset and every spec a user can write: rows of one range in the same millisecond are
// ordered by whatever follows the time component (a topic hash, a reversed int, a terminated
// field...), and a merge that orders them any other way fails the query ("rows out of time order").
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fake_scanner_factory.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"

namespace hbingest::query {
namespace {

using testing::FakeScannerFactory;

constexpr std::int64_t kSecond = 1714564800000;  // 2024-05-01T12:00:00Z: epoch-second times, many equal

// A table of random events under one spec, most of them in the same millisecond.
struct Table {
  std::shared_ptr<const keyspec::KeySpec> spec;
  FakeScannerFactory factory;
  std::map<std::string, std::int64_t> time_of;  // stored key -> event time
  std::map<std::string, std::string> event_of;  // stored key -> event type
  bool by_event = false;                        // queries fix the event component (it precedes the time component)
};

void fill(Table& table, std::mt19937_64& rng, int count) {
  static const std::array<std::string, 3> kTopics = {"orders", "payments", "events.audit"};
  static const std::array<std::string, 3> kColours = {"red", "green", "blue"};
  std::string key;
  for (int i = 0; i < count; ++i) {
    const std::int64_t ts = kSecond + (rng() % 4 == 0 ? 1000 : 0);
    const std::string type = rng() % 3 == 0 ? "order" : "login";
    const std::string& topic = kTopics[rng() % kTopics.size()];
    keyspec::MapEventFields fields({{"event_id", type},
                                    {"ts", ts},
                                    {"host", "h" + std::to_string(rng() % 5)},
                                    {"event", type},
                                    {"user", "u" + std::to_string(rng() % 40)},
                                    {"n", static_cast<std::int64_t>(rng() % 1000)},
                                    {"colour", kColours[rng() % kColours.size()]}});
    const keyspec::KafkaMeta meta{.topic = topic,
                                  .partition = static_cast<std::int32_t>(rng() % 12),
                                  .offset = static_cast<std::int64_t>(rng() % 100000),
                                  .timestamp_ms = ts};
    if (const auto error = table.spec->encode(fields, meta, key)) FAIL() << error->message();
    table.factory.put("t", key, {{.family = "d", .qualifier = "q", .value = "v", .timestamp_ms = ts}});
    table.time_of[key] = ts;
    table.event_of[key] = type;
  }
}

// Every query the engine can make of the table: both orders, with and without a limit, through
// tiny and large chunks. The answer must be in time order and hold exactly the matching rows.
void check_queries(Table& table, const std::string& what) {
  const std::vector<std::string> types =
      table.by_event ? std::vector<std::string>{"login", "order"} : std::vector<std::string>{"any"};
  for (const auto& type : types) {
    std::multiset<std::int64_t> all_times;
    std::set<std::string> all_keys;
    for (const auto& [key, ts] : table.time_of) {
      if (!table.by_event || table.event_of[key] == type) {
        all_times.insert(ts);
        all_keys.insert(key);
      }
    }
    for (const Order order : {Order::asc, Order::desc}) {
      for (const std::size_t limit : {std::size_t{0}, std::size_t{7}}) {
        for (const int chunk_rows : {1, 500}) {
          EngineOptions options;
          options.concurrency = 3;
          options.chunk_rows = chunk_rows;
          QueryEngine engine(table.factory, options);
          Query q;
          q.table = "t";
          q.spec = table.spec;
          if (table.by_event) q.event_id = type;
          q.order = order;
          q.limit = limit;
          const auto where = what + " event " + type + (order == Order::asc ? " asc" : " desc") + " limit " +
                             std::to_string(limit) + " chunk " + std::to_string(chunk_rows);
          QueryResult result;
          try {
            result = engine.run(q);
          } catch (const std::exception& e) {
            FAIL() << where << ": " << e.what();
          }
          std::vector<std::int64_t> times;
          std::set<std::string> keys;
          for (const auto& row : result.rows) {
            times.push_back(table.time_of.at(row.key));
            keys.insert(row.key);
          }
          std::vector<std::int64_t> want(all_times.begin(), all_times.end());
          if (order == Order::desc) std::reverse(want.begin(), want.end());
          if (limit != 0 && want.size() > limit) want.resize(limit);
          ASSERT_EQ(times, want) << where;
          if (limit == 0) {
            ASSERT_EQ(keys, all_keys) << where;
          }
          ASSERT_EQ(keys.size(), result.rows.size()) << where << ": a row came twice";
        }
      }
    }
  }
}

// The presets a query can be made of through the engine: the components before the time are the
// salt and the event (or nothing).
TEST(MergeOrder, PresetsWithRowsInTheSameMillisecond) {
  std::mt19937_64 rng(11);
  for (const auto& preset : {"events", "events_by_topic", "logs"}) {
    Table table;
    table.spec = std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset(preset, {{"buckets", "3"}}));
    table.by_event = std::string(preset) != "logs";  // logs: bucket | time | host | event
    fill(table, rng, 300);
    check_queries(table, preset);
  }
}

// Random specs: an optional lead (salt or bucket), an optional event component, a time component
// in every format a plan can range over (reversed too), then up to four components of any kind.
std::string random_spec(std::mt19937_64& rng, bool& by_event) {
  std::string yaml = "components:\n";
  switch (rng() % 4) {
    case 0:
      yaml += "  - {name: salt, type: salt, buckets: " + std::to_string(1 + rng() % 4) +
              ", of: [kafka:partition, kafka:offset]}\n";
      break;
    case 1:
      yaml += "  - {name: salt, type: salt, buckets: 3, encoding: binary, of: [kafka:topic]}\n";
      break;
    case 2:
      yaml += "  - {name: lead, type: bucket, field: n, buckets: 2}\n";
      break;
    default:
      break;
  }
  by_event = true;
  switch (rng() % 4) {
    case 0:
      yaml += "  - {name: event, type: field, field: event_id, width: 8}\n";
      break;
    case 1:
      yaml += "  - {name: event, type: field, field: event_id, terminator: \"\\0\"}\n";
      break;
    case 2:
      yaml += "  - {name: event, type: dict, field: event_id, values: {login: \"L\", order: \"O\"}}\n";
      break;
    default:
      by_event = false;
      break;
  }
  static const std::array<std::string, 6> kTimes = {
      "format: yyyyMMddHHmmssSSS", "format: \"yyyy-MM-dd HH:mm:ss.SSS\"", "format: binary",
      "format: decimal",           "format: binary, reversed: true",      "format: decimal, reversed: true"};
  yaml += "  - {name: time, type: time, field: ts, " + kTimes[rng() % kTimes.size()] + "}\n";
  static const std::array<std::string, 14> kAfter = {
      "type: hash, of: [kafka:topic], algorithm: xxh64, bytes: 4",
      "type: hash, of: [kafka:topic, kafka:partition], algorithm: md5, bytes: 2",
      "type: hash, field: user, algorithm: sha1",
      "type: partition, width: 4",
      "type: partition, encoding: binary",
      "type: offset",
      "type: offset, encoding: binary",
      "type: int, field: n, width: 6, reversed: true",
      "type: int, field: n, encoding: binary, width: 4",
      "type: field, field: user, width: 6",
      "type: field, field: host, terminator: \"/\"",
      "type: reverse, field: user, width: 6",
      "type: dict, field: colour, values: {red: \"3\", green: \"1\", blue: \"2\"}",
      "type: literal, value: \"#\""};
  const std::size_t after = rng() % 5;
  for (std::size_t i = 0; i < after; ++i) {
    yaml += "  - {name: c" + std::to_string(i) + ", " + kAfter[rng() % kAfter.size()] + "}\n";
  }
  return yaml;
}

TEST(MergeOrder, RandomSpecsWithRowsInTheSameMillisecond) {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 60; ++trial) {
    Table table;
    const std::string yaml = random_spec(rng, table.by_event);
    table.spec = std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::from_yaml_text(yaml, "random"));
    fill(table, rng, 120);
    check_queries(table, "trial " + std::to_string(trial) + ":\n" + yaml);
  }
}

}  // namespace
}  // namespace hbingest::query
