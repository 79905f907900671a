#pragma once
// Splits captured output (a log sink, a subprocess's stderr) into its lines, for assertions.

#include <sstream>
#include <string>
#include <vector>

namespace hbingest::testing {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace hbingest::testing
