#pragma once
// An event's time value → epoch milliseconds: the one reading shared by the daemon's decoder (the
// cell timestamp, decode.time_format) and the key spec (time components, month salts and time
// buckets, `input:`), so both read the same value as the same instant. docs/keyspec.md, "Time of a
// value". Pure, safe from any thread.

#include <cstdint>
#include <string_view>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {

// How a time value is written.
enum class TimeInput { EpochMs, EpochS, Rfc3339, Auto };

// Under TimeInput::Auto an integer n with |n| below this is epoch seconds, otherwise epoch ms:
// 1e11 s is the year 5138, 1e11 ms is 1973.
inline constexpr std::int64_t kAutoSecondsBelow = 100'000'000'000;

// Reads `value` as epoch ms (UTC):
//   EpochMs, EpochS: an integer, a decimal string ("1714564800000") or a float (a fraction floors to ms);
//   Rfc3339: an RFC 3339 string only;
//   Auto: integers, decimal strings and integral floats by magnitude (kAutoSecondsBelow), floats with
//         a fraction as seconds when |v| < 1e11, any other string as RFC 3339.
// Null, booleans, nested values and out-of-int64 times are rejected. Any int64 ms is accepted: callers
// with narrower ranges (binary times, HBase timestamps, date patterns) check their own.
// Returns an empty view on success, else the reason ("not an RFC 3339 time", "wrong type (...)").
std::string_view read_time_ms(const FieldValue& value, TimeInput input, std::int64_t& ms);

}  // namespace hbingest::keyspec
