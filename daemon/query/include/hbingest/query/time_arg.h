#pragma once
// Time arguments of queries (HTTP `from`/`to`, CLI `--from`/`--to`).

#include <cstdint>
#include <string>
#include <string_view>

namespace hbingest::query {

// Epoch milliseconds ("1714564800000", may be negative) or RFC 3339 ("2024-05-01T12:00:00Z",
// "2024-05-01T14:00:00.250+02:00"; fraction truncated to ms). Throws std::invalid_argument.
std::int64_t parse_time_arg(std::string_view text);

}  // namespace hbingest::query
