#include <string>
#include <utility>
#include <vector>

#include "hbingest/config/config.h"

namespace hbingest::config {

namespace {

std::string join_lines(const std::vector<std::string>& problems) {
  std::string out = std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems") + " in config:";
  for (const auto& p : problems) {
    out += "\n  ";
    out += p;
  }
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)), problems_(std::move(problems)) {}

}  // namespace hbingest::config
