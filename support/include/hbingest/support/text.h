#pragma once
// Small text helpers shared by the modules (config keys and values, HTTP header names).

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace hbingest::support {

// ASCII lower case: config values, librdkafka settings and HTTP header names are ASCII, and the
// locale must not change what they mean.
inline std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace hbingest::support
