#include "event_table.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace hbingest::query::testing {

EventTable::EventTable(std::string table, int buckets)
    : table_(std::move(table)),
      spec_(std::make_shared<const keyspec::KeySpec>(
          keyspec::KeySpec::preset("events", {{"buckets", std::to_string(buckets)}}))) {}

void EventTable::fill(FakeScannerFactory& factory, std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> ts(kStartMs, kStartMs + kSpanMs - 1);
  std::uniform_int_distribution<std::int32_t> partition(0, 3);
  std::vector<std::int64_t> next_offset(4, 1000);
  std::string key;
  for (std::size_t i = 0; i < count; ++i) {
    StoredEvent event;
    event.event_id = rng() % 3 == 0 ? "order" : "login";
    event.ts_ms = ts(rng);
    event.partition = partition(rng);
    event.offset = next_offset[static_cast<std::size_t>(event.partition)]++;
    const keyspec::MapEventFields fields(
        {{"event_id", event.event_id}, {"ts", event.ts_ms}, {"user", "u" + std::to_string(i)}});
    const keyspec::KafkaMeta meta{
        .topic = "events", .partition = event.partition, .offset = event.offset, .timestamp_ms = event.ts_ms};
    if (const auto error = spec_->encode(fields, meta, key)) throw std::runtime_error(error->message());
    event.key = key;
    // The value carries quotes, a backslash, a newline and non-ASCII text to exercise JSON escaping.
    factory.put(table_, key,
                {{.family = "d", .qualifier = "event_id", .value = event.event_id, .timestamp_ms = event.ts_ms},
                 {.family = "d", .qualifier = "user", .value = "u" + std::to_string(i), .timestamp_ms = event.ts_ms},
                 {.family = "d", .qualifier = "note", .value = "say \"hi\" \\ é\n", .timestamp_ms = event.ts_ms}});
    events_.push_back(std::move(event));
  }
}

std::vector<std::string> EventTable::expected(const std::string& event_id, std::optional<std::int64_t> from_ms,
                                              std::optional<std::int64_t> to_ms, Order order, std::size_t limit) const {
  std::vector<const StoredEvent*> hits;
  for (const auto& event : events_) {
    if (event.event_id != event_id) continue;
    if (from_ms && event.ts_ms < *from_ms) continue;
    if (to_ms && event.ts_ms >= *to_ms) continue;
    hits.push_back(&event);
  }
  std::sort(hits.begin(), hits.end(), [&](const StoredEvent* a, const StoredEvent* b) {
    const auto ka = std::tie(a->ts_ms, a->partition, a->offset);
    const auto kb = std::tie(b->ts_ms, b->partition, b->offset);
    return order == Order::asc ? ka < kb : kb < ka;
  });
  if (limit != 0 && hits.size() > limit) hits.resize(limit);
  std::vector<std::string> keys;
  for (const auto* hit : hits) keys.push_back(hit->key);
  return keys;
}

}  // namespace hbingest::query::testing
