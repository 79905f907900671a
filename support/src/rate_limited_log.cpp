#include "hbingest/support/rate_limited_log.h"

#include <spdlog/spdlog.h>

namespace hbingest::support {

RateLimitedLog::RateLimitedLog(std::chrono::milliseconds interval, Clock clock)
    : interval_(interval), clock_(std::move(clock)) {}

std::optional<std::uint64_t> RateLimitedLog::admit(std::string_view key) {
  const auto now = clock_();
  std::lock_guard lock(mutex_);
  auto it = keys_.find(std::string(key));
  if (it == keys_.end()) {
    if (keys_.size() >= kMaxKeys) forget_idle(now);
    keys_.emplace(std::string(key), KeyState{now, 0});
    return 0;
  }
  KeyState& state = it->second;
  if (now - state.last_logged < interval_) {
    ++state.suppressed;
    return std::nullopt;
  }
  const std::uint64_t suppressed = state.suppressed;
  state = KeyState{now, 0};
  return suppressed;
}

void RateLimitedLog::forget_idle(std::chrono::steady_clock::time_point now) {
  std::erase_if(keys_, [&](const auto& entry) { return now - entry.second.last_logged >= interval_; });
  // Everything is recent: an unbounded key space (a bug in the caller) must not grow memory.
  if (keys_.size() >= kMaxKeys) keys_.clear();
}

void RateLimitedLog::log(spdlog::level::level_enum level, std::string_view key, std::string_view message) {
  const auto suppressed = admit(key);
  if (!suppressed) return;
  if (*suppressed == 0) {
    spdlog::log(level, "{}", message);
  } else {
    spdlog::log(level, "{} ({} repeats suppressed; logged at most every {}s)", message, *suppressed,
                std::chrono::duration<double>(interval_).count());
  }
}

}  // namespace hbingest::support
