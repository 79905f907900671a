#include "spec_problems.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <utility>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec::detail {

void SpecProblems::add(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  std::string line = source_;
  if (!mark.is_null()) line += ':' + std::to_string(mark.line + 1) + ':' + std::to_string(mark.column + 1);
  line += ": ";
  if (!path.empty()) {
    line += path;
    line += ": ";
  }
  line += message;
  Problem p{-1, -1, std::move(line)};
  if (!mark.is_null()) {
    p.line = mark.line;
    p.column = mark.column;
  }
  problems_.push_back(std::move(p));
}

void SpecProblems::raise() {
  // Cross-reference checks run after the components; the user reads the file top to bottom.
  std::stable_sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  std::vector<std::string> lines;
  lines.reserve(problems_.size());
  for (auto& p : problems_) lines.push_back(std::move(p.text));
  throw SpecError(std::move(lines));
}

}  // namespace hbingest::keyspec::detail
