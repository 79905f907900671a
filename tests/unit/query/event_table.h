#pragma once
// Random login/order events keyed by the real `events` KeySpec preset and stored in a fake table,
// plus the brute-force answer a query must equal.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fake_scanner_factory.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query.h"

namespace hbingest::query::testing {

struct StoredEvent {
  std::string key;
  std::string event_id;
  std::int64_t ts_ms = 0;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
};

class EventTable {
 public:
  static constexpr std::int64_t kStartMs = 1714564800000;  // 2024-05-01T12:00:00Z
  static constexpr std::int64_t kSpanMs = 600000;          // ten minutes of events

  EventTable(std::string table, int buckets);

  // Adds `count` events with random type, time in [kStartMs, kStartMs + kSpanMs), partition and
  // increasing offsets.
  void fill(FakeScannerFactory& factory, std::size_t count, std::uint32_t seed);

  // Brute force: filter all stored events and sort them in the test, independently of the merge.
  std::vector<std::string> expected(const std::string& event_id, std::optional<std::int64_t> from_ms,
                                    std::optional<std::int64_t> to_ms, Order order, std::size_t limit) const;

  const std::shared_ptr<const keyspec::KeySpec>& spec() const { return spec_; }
  const std::string& table() const { return table_; }
  const std::vector<StoredEvent>& events() const { return events_; }

 private:
  std::string table_;
  std::shared_ptr<const keyspec::KeySpec> spec_;
  std::vector<StoredEvent> events_;
};

}  // namespace hbingest::query::testing
