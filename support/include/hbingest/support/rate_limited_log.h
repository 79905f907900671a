#pragma once
// Logs the same message key at most once per interval; the next message that gets through carries
// the number of repeats suppressed in between ("... (41 repeats suppressed; logged at most every 10s)").
//
// Keys name the kind of error ("hbase-write:host:9090", a librdkafka error name), never per-event
// data, so their number stays small; beyond kMaxKeys, keys idle for a whole interval are forgotten.
// Thread safety: all methods may be called concurrently (one mutex; meant for error paths).

#include <spdlog/common.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hbingest::support {

class RateLimitedLog {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::size_t kMaxKeys = 4096;

  explicit RateLimitedLog(std::chrono::milliseconds interval, Clock clock = &std::chrono::steady_clock::now);

  // Logs `message` at `level` on the default logger unless suppressed.
  void log(spdlog::level::level_enum level, std::string_view key, std::string_view message);

  // The decision alone: nullopt to suppress; otherwise the count of repeats suppressed since the
  // key was last admitted (0 the first time).
  std::optional<std::uint64_t> admit(std::string_view key);

 private:
  struct KeyState {
    std::chrono::steady_clock::time_point last_logged;
    std::uint64_t suppressed = 0;
  };
  void forget_idle(std::chrono::steady_clock::time_point now);

  const std::chrono::milliseconds interval_;
  const Clock clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, KeyState> keys_;
};

}  // namespace hbingest::support
