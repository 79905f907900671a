#pragma once
// Instants as people type them, for the CLI and the query layer: epoch milliseconds ("1700000000123")
// or RFC 3339 ("2023-11-14T22:13:20.123Z", "...+08:00"). Pure functions, safe from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hbingest::keyspec {

// nullopt when `text` is neither an integer of epoch ms nor an RFC 3339 time.
std::optional<std::int64_t> parse_instant_ms(std::string_view text);
// RFC 3339 only ("...Z" or "...+08:00"; fraction truncated to ms); nullopt otherwise.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view text);

// "2023-11-14T22:13:20.123Z" (UTC).
std::string format_instant(std::int64_t ms);

}  // namespace hbingest::keyspec
