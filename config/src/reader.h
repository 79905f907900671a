#pragma once
// State of one config load: the problems found so far, where each key was seen (for cross-field
// messages), and scalar access with ${...} substitution.

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::config::detail {

class Reader {
 public:
  Reader(std::string source, std::filesystem::path base_dir);

  // "source:line:col: path: message".
  void problem(const YAML::Mark& mark, std::string_view path, std::string_view message);
  // At the key's own location, else its nearest parent's, else the top of the file.
  void problem_at(std::string_view path, std::string_view message);

  void remember(std::string path, const YAML::Mark& mark);
  bool seen(std::string_view path) const;
  std::optional<YAML::Mark> mark_of(std::string_view path) const;

  // The scalar's text after substitution; nullopt after recording a problem (not a scalar, or a
  // substitution failed). `expected` names the type for the message ("a duration").
  std::optional<std::string> scalar(const YAML::Node& node, std::string_view path, std::string_view expected);

  std::string location(const YAML::Mark& mark) const;  // "source:line"
  const std::string& source() const { return source_; }
  const std::filesystem::path& base_dir() const { return base_dir_; }
  std::vector<std::string> take_problems() { return std::move(problems_); }

 private:
  std::string source_;
  std::filesystem::path base_dir_;
  std::vector<std::string> problems_;
  std::map<std::string, YAML::Mark, std::less<>> marks_;
};

// "a mapping", "a sequence", "null", "a scalar".
std::string_view node_kind(const YAML::Node& node);

}  // namespace hbingest::config::detail
