#pragma once
// The problems found while loading one spec. Loading goes on after a problem so that a user fixes
// a spec in one round; raise() then throws them all in one SpecError.

#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Mark;
}

namespace hbingest::keyspec::detail {

class SpecProblems {
 public:
  explicit SpecProblems(std::string_view source) : source_(source) {}

  // "<source>:<line>:<col>: <path>: <message>"; the path (e.g. "components[1].width") is left out
  // when empty, the position when the mark is null.
  void add(const YAML::Mark& mark, std::string_view path, std::string_view message);

  std::size_t size() const { return problems_.size(); }
  bool empty() const { return problems_.empty(); }
  const std::string& source() const { return source_; }

  // Throws SpecError listing every problem, one per line in document order. Only call when !empty().
  [[noreturn]] void raise();

 private:
  struct Problem {
    int line = -1;  // -1: no position (sorts first)
    int column = -1;
    std::string text;
  };
  std::string source_;
  std::vector<Problem> problems_;
};

}  // namespace hbingest::keyspec::detail
