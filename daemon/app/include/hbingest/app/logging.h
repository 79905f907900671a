#pragma once
// Process-wide logging on spdlog: text (terminals, journald) or JSON lines (log shippers), to stderr.
//
// setup_logging() replaces spdlog's default logger; call it once at start, before threads log.
// set_log_level() is safe from any thread (SIGHUP handling thread). Messages must never carry
// secrets or whole event payloads at info and above; as a safety net, every message is scrubbed of
// the secrets the config loader registered (support/secrets.h) before it is formatted.

#include <spdlog/common.h>
#include <spdlog/fwd.h>

#include <memory>
#include <string>
#include <string_view>

#include "hbingest/config/config.h"

namespace hbingest::app {

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

}  // namespace hbingest::app
