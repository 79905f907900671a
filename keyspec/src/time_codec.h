#pragma once
// Time parsing and formatting for keyspec: ms ↔ RFC 3339 and restricted date patterns (event values
// → epoch ms is the public read_time_ms, hbingest/keyspec/event_time.h).
// All UTC, no allocation on the encode path, no clock.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/keyspec/event_time.h"
#include "hbingest/keyspec/key_spec.h"
#include "spec_model.h"

namespace hbingest::keyspec::detail {

// Instants a date pattern can hold: 0000-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z.
inline constexpr std::int64_t kPatternMinMs = -62167219200000LL;
inline constexpr std::int64_t kPatternMaxMs = 253402300799999LL;

// Reads an integer: int64, a decimal string, or an integral double. False otherwise.
bool read_int(const FieldValue& value, std::int64_t& out);

// RFC 3339 ("2023-11-14T22:13:20.123Z", "...+08:00", fraction truncated to ms).
bool parse_rfc3339(std::string_view text, std::int64_t& ms);
// "2023-11-14T22:13:20.123Z".
std::string format_rfc3339(std::int64_t ms);

// Parses a pattern (Java letters yyyy MM dd HH mm ss SSS, or strftime %Y %m %d %H %M %S %L, plus
// punctuation literals). Returns an empty string on success, else the reason.
std::string parse_time_pattern(std::string_view spec, std::vector<TimeToken>& tokens, bool& full_resolution);
std::size_t pattern_width(const std::vector<TimeToken>& tokens);
bool pattern_has(const std::vector<TimeToken>& tokens, TimeUnit unit);

// Appends ms formatted by the pattern. False when the instant is outside the pattern's years.
bool format_pattern(const std::vector<TimeToken>& tokens, std::int64_t ms, std::string& out);

// Civil fields read back from pattern text; -1 where the pattern has no such field.
struct CivilFields {
  int year = -1, month = -1, day = -1, hour = -1, minute = -1, second = -1, milli = -1;
};
// Parses text that must match the pattern exactly (digits where digits, the same literals).
bool parse_pattern_text(const std::vector<TimeToken>& tokens, std::string_view text, CivilFields& out);
// Epoch ms of complete civil fields; nullopt when a field is missing or the date is invalid.
std::optional<std::int64_t> civil_to_ms(const CivilFields& civil);
// UTC month 1..12 of an instant.
int utc_month(std::int64_t ms);

}  // namespace hbingest::keyspec::detail
