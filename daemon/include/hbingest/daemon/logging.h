#pragma once
// Process-wide logging on spdlog: text (terminals, journald) or JSON lines (log shippers), to stderr.
//
// setup_logging() replaces spdlog's default logger; call it once at start, before threads log.
// set_log_level() is safe from any thread (SIGHUP handling thread). Messages must never carry
// secrets or whole event payloads at info and above.

#include <spdlog/common.h>
#include <spdlog/fwd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hbingest/config/config.h"

namespace hbingest::daemon {

// Installs the default logger "hbingest" writing to stderr in `config.format` at `config.level`.
void setup_logging(const config::LoggingConfig& config);
// Same, writing to `sink` (tests, or another destination).
void setup_logging(const config::LoggingConfig& config, std::shared_ptr<spdlog::sinks::sink> sink);

// Sets the level of every logger ("trace" ... "critical", "off"). Throws std::invalid_argument
// naming the text when it is not a level (spdlog would silently read it as "off").
void set_log_level(std::string_view level);

// The JSON-lines formatter: {"ts":"2024-05-01T12:00:00.123Z","level":"info","logger":"hbingest",
// "thread":123,"msg":"..."} with proper escaping (invalid UTF-8 replaced), plus "src" when known.
std::unique_ptr<spdlog::formatter> make_json_formatter();

// Logs the same message key at most once per interval; the next message that gets through carries
// the number of repeats suppressed in between ("... (41 repeats suppressed; logged at most every 10s)").
//
// Keys name the kind of error ("hbase-write:host:9090"), never per-event data, so their number
// stays small; beyond kMaxKeys, keys idle for a whole interval are forgotten.
// Thread safety: all methods may be called concurrently (one mutex; meant for error paths).
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

}  // namespace hbingest::daemon
