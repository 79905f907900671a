#pragma once
// Built-in key specs reproducing the design notes, as YAML text run through the ordinary loader.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::keyspec::detail {

// The preset's YAML with parameters substituted. Throws SpecError for an unknown preset, an unknown
// parameter or a parameter value that is not a plain word/number.
std::string preset_yaml(std::string_view name, const std::map<std::string, std::string, std::less<>>& params);
std::vector<std::string> preset_names();

}  // namespace hbingest::keyspec::detail
