#pragma once
// "Did you mean" for misspelt spec keys, types and choices. The same rule as the config module's
// (config/src/edit_distance.h), kept here because keyspec sits below config and must not link it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::keyspec::detail {

// Case-insensitive optimal-string-alignment distance (Levenshtein plus adjacent transposition).
std::size_t edit_distance(std::string_view a, std::string_view b);

// " (did you mean 'x'?)" when a candidate is close enough to be a plausible typo, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hbingest::keyspec::detail
