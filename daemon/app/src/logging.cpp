#include "hbingest/app/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "hbingest/config/duration.h"
#include "hbingest/support/secrets.h"

namespace hbingest::app {

namespace {

constexpr const char* kLoggerName = "hbingest";
// ISO 8601 in UTC, so lines from hosts in different zones sort together.
constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%eZ %^%-5l%$ [%n] [%t] %v";

std::string utc_timestamp(spdlog::log_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t t = seconds.count();
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buffer{};
  const std::size_t n = std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%S", &tm);
  std::array<char, 8> fraction{};
  std::snprintf(fraction.data(), fraction.size(), ".%03dZ", static_cast<int>(millis));
  return std::string(buffer.data(), n) + fraction.data();
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    nlohmann::ordered_json line;
    line["ts"] = utc_timestamp(msg.time);
    const auto level = spdlog::level::to_string_view(msg.level);
    line["level"] = std::string(level.data(), level.size());
    line["logger"] = std::string(msg.logger_name.data(), msg.logger_name.size());
    line["thread"] = msg.thread_id;
    line["msg"] = std::string(msg.payload.data(), msg.payload.size());
    if (!msg.source.empty()) line["src"] = std::string(msg.source.filename) + ":" + std::to_string(msg.source.line);
    // A log line must never be lost to a stray byte in an error text: replace invalid UTF-8.
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

// Scrubs the process's registered secrets (support/secrets.h) from each message before the
// wrapped formatter lays it out: every line passes here, librdkafka's own log lines included, so
// a secret echoed by any library never reaches the journal. The payload is scrubbed, not the
// formatted line, so JSON escaping cannot hide a secret from the search.
class ScrubbingFormatter final : public spdlog::formatter {
 public:
  explicit ScrubbingFormatter(std::unique_ptr<spdlog::formatter> inner) : inner_(std::move(inner)) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    const std::string scrubbed = support::scrub_registered(payload);
    if (scrubbed == payload) {
      inner_->format(msg, dest);
      return;
    }
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(scrubbed.data(), scrubbed.size());
    inner_->format(copy, dest);
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<ScrubbingFormatter>(inner_->clone());
  }

 private:
  std::unique_ptr<spdlog::formatter> inner_;
};

spdlog::level::level_enum parse_level(std::string_view text) {
  for (int i = spdlog::level::trace; i < spdlog::level::n_levels; ++i) {
    const auto level = static_cast<spdlog::level::level_enum>(i);
    const auto name = spdlog::level::to_string_view(level);
    if (text == std::string_view(name.data(), name.size())) return level;
  }
  if (text == "warn" || text == "warning") return spdlog::level::warn;  // spdlog names it "warning"
  throw std::invalid_argument("unknown log level '" + std::string(text) +
                              "' (expected trace, debug, info, warn, error, critical or off)");
}

}  // namespace

std::unique_ptr<spdlog::formatter> make_json_formatter() { return std::make_unique<JsonFormatter>(); }

void setup_logging(const config::LoggingConfig& config, std::shared_ptr<spdlog::sinks::sink> sink) {
  const auto level = parse_level(config.level);
  if (config.format == config::LogFormat::json) {
    sink->set_formatter(std::make_unique<ScrubbingFormatter>(make_json_formatter()));
  } else {
    sink->set_formatter(std::make_unique<ScrubbingFormatter>(
        std::make_unique<spdlog::pattern_formatter>(kTextPattern, spdlog::pattern_time_type::utc)));
  }
  auto logger = std::make_shared<spdlog::logger>(kLoggerName, std::move(sink));
  logger->set_level(level);
  // Warnings and errors reach the journal even if the process dies right after.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(level);
}

void setup_logging(const config::LoggingConfig& config) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  if (config.format == config::LogFormat::json) {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();  // colours only on a terminal
  }
  setup_logging(config, std::move(sink));
}

void set_log_level(std::string_view level) { spdlog::set_level(parse_level(level)); }

}  // namespace hbingest::app
