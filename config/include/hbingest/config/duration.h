#pragma once
// Durations in config values: one or more <integer><unit> groups, units ms, s, m, h, d
// ("50ms", "1s", "10m", "2h", "1h30m"). "0" alone is accepted; any other bare number is rejected
// because its unit would be a guess.

#include <chrono>
#include <string>
#include <string_view>

namespace hbingest::config {

// Throws std::invalid_argument with a message that quotes the text and says what is expected.
std::chrono::milliseconds parse_duration(std::string_view text);

// The shortest text parse_duration() maps back to the same value ("10m", "1h30m", "250ms").
std::string format_duration(std::chrono::milliseconds value);

}  // namespace hbingest::config
