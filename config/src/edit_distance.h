#pragma once
// "Did you mean" suggestions for misspelt keys and enum values.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::config::detail {

// Case-insensitive optimal-string-alignment distance (Levenshtein plus adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate if it is close enough to be a plausible typo, else nullopt.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hbingest::config::detail
