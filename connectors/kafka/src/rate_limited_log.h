#pragma once
// Private to hbingest::kafka: lets a repeating error (a broker down for an hour) log once per
// interval per key, with the number of repeats that were suppressed in between.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace hbingest::connectors::detail {

// Not thread-safe: one per polling thread.
class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::chrono::milliseconds interval) : interval_(interval) {}

  // The number of suppressed repeats since the last emitted line when this one should be logged,
  // nullopt when it should be suppressed.
  std::optional<std::uint64_t> admit(const std::string& key, std::chrono::steady_clock::time_point now) {
    auto& slot = slots_[key];
    if (slot.last_emitted && now - *slot.last_emitted < interval_) {
      ++slot.suppressed;
      return std::nullopt;
    }
    slot.last_emitted = now;
    return std::exchange(slot.suppressed, 0);
  }

 private:
  struct Slot {
    std::optional<std::chrono::steady_clock::time_point> last_emitted;
    std::uint64_t suppressed = 0;
  };
  std::chrono::milliseconds interval_;
  std::map<std::string, Slot> slots_;
};

}  // namespace hbingest::connectors::detail
