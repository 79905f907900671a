#pragma once
// "Did you mean" suggestions for misspelt keys, types and choices: one rule for the config loader
// and the key spec loader. Pure functions, safe from any thread.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::support {

// Case-insensitive optimal-string-alignment distance (Levenshtein plus adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` when it is a plausible typo: at most 2 edits, or a third of the
// word for long words, and fewer edits than the longer of the two has characters. A candidate
// differing only in case is a typo too (distance 0: keys are case-sensitive). nullopt otherwise.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for closest_match, or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hbingest::support
