#pragma once
// Sample traffic for the demo, tests and benchmarks: login and order events as JSON, with a
// configurable share of invalid ones. Pure: no clock, no I/O; the same seed and the same
// sequence of `now_ms` values give the same events.

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::connectors {

struct EventGeneratorOptions {
  std::uint64_t seed = 1;
  double invalid_fraction = 0.0;  // [0, 1]: share of events that are invalid (see EventKind)
  double order_fraction = 0.4;    // [0, 1]: share of the valid events that are orders
  std::uint32_t users = 100000;   // user ids u000000 .. u(users-1)
  double zipf_exponent = 1.1;     // > 0; user popularity ~ 1 / rank^s (a few users dominate)
  // 0: every event's ts is `now_ms`; otherwise uniform in [now_ms - time_spread, now_ms].
  std::chrono::milliseconds time_spread{0};
};

enum class EventKind {
  kLogin,
  kOrder,
  // Invalid ones, equally likely among themselves:
  kBadJson,          // a valid event cut short
  kMissingEventId,   // no event_id field
  kMissingTs,        // no ts field
  kBinaryGarbage,    // random bytes, not UTF-8, not JSON
  kOverlongEventId,  // event_id of kOverlongEventIdLength characters
  kUnknownType,      // event_id is neither login nor order
};

std::string_view to_string(EventKind kind) noexcept;

struct GeneratedEvent {
  EventKind kind = EventKind::kLogin;
  std::optional<std::string> key;  // the user id, none for binary garbage
  std::string payload;
  std::int64_t ts_ms = 0;  // the event time written (or that would have been) into the payload
  bool valid() const noexcept { return kind == EventKind::kLogin || kind == EventKind::kOrder; }
};

// Not thread-safe (owns its random engine); cheap to create one per thread with distinct seeds.
class EventGenerator {
 public:
  static constexpr std::size_t kOverlongEventIdLength = 300;

  // Throws std::invalid_argument naming the option when out of range.
  explicit EventGenerator(const EventGeneratorOptions& options);

  GeneratedEvent next(std::int64_t now_ms);

 private:
  double unit();                         // uniform [0, 1)
  std::uint64_t below(std::uint64_t n);  // uniform [0, n)
  std::uint32_t zipf_user();
  std::string user_id(std::uint32_t user) const;
  std::string login_json(std::int64_t ts, const std::string& user, bool with_event_id, bool with_ts,
                         const std::string& event_id);
  std::string order_json(std::int64_t ts, const std::string& user);

  EventGeneratorOptions options_;
  std::mt19937_64 rng_;
  std::vector<double> zipf_cdf_;  // cumulative popularity by rank, last element 1.0
};

}  // namespace hbingest::connectors
