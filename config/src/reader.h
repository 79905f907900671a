#pragma once
// State of one config load: the problems found so far, where each key was seen (for cross-field
// messages), scalar access with ${...} substitution, and the secret values resolved so far.
//
// Secrets never reach a problem message: a message about a value that came from a ${...}
// reference shows the reference instead of the value (shown(), invalid()), and every message is
// scrubbed of the secrets collected so far (values of secret keys, contents of ${file:} files).

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::config::detail {

class Reader {
 public:
  Reader(std::string source, std::filesystem::path base_dir);

  // "source:line:col: path: message", with every collected secret scrubbed from `message`.
  void problem(const YAML::Mark& mark, std::string_view path, std::string_view message);
  // At the key's own location, else its nearest parent's, else the top of the file.
  void problem_at(std::string_view path, std::string_view message);

  // Whether a problem was recorded for exactly `path`.
  bool has_problem(std::string_view path) const { return problem_paths_.find(path) != problem_paths_.end(); }

  // A setting that loads but is unsafe, located like problem_at(); scrubbed like a problem.
  void warning_at(std::string_view path, std::string_view message);
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

  void remember(std::string path, const YAML::Mark& mark);
  bool seen(std::string_view path) const;
  std::optional<YAML::Mark> mark_of(std::string_view path) const;

  // The scalar's text after substitution; nullopt after recording a problem (not a scalar, or a
  // substitution failed). `expected` names the type for the message ("a duration").
  // A value with a reference is remembered (shown() names the reference); one read through
  // ${file:} or at a secret key (support::is_secret_key) is collected as a secret.
  std::optional<std::string> scalar(const YAML::Node& node, std::string_view path, std::string_view expected);

  // How a message quotes the value read at `path`: "'text'" (or "text" unless `quoted`), or
  // "the value of '${REF}'" when the value came from a reference (it may be a secret whatever the key).
  std::string shown(std::string_view path, std::string_view text, bool quoted = true) const;
  // The message for a value at `path` that does not parse as `expected` ("a size"): `detail` (the
  // parser's message, which quotes the text or parts of it) for a literal value, else a message
  // naming the reference only.
  std::string invalid(std::string_view path, std::string_view detail, std::string_view expected) const;

  // A secret resolved at `path` (scalar() calls it; so do http.token_file and http.token_env). One
  // too short to be scrubbed from free text (support::kMinScrubbedLength) gets a warning.
  void add_secret(std::string value, std::string_view path);
  std::vector<std::string> take_secrets() { return std::move(secrets_); }

  std::string location(const YAML::Mark& mark) const;  // "source:line"
  const std::string& source() const { return source_; }
  const std::filesystem::path& base_dir() const { return base_dir_; }
  std::vector<std::string> take_problems() { return std::move(problems_); }

 private:
  // The key's own location, else its nearest parent's, else the top of the file.
  YAML::Mark mark_or_parent(std::string_view path) const;

  std::string source_;
  std::filesystem::path base_dir_;
  std::vector<std::string> problems_;
  std::vector<std::string> warnings_;
  std::set<std::string, std::less<>> problem_paths_;
  std::map<std::string, YAML::Mark, std::less<>> marks_;
  std::map<std::string, std::string, std::less<>> references_;  // path -> the scalar as written, "${file:pw}"
  std::vector<std::string> secrets_;
};

// "a mapping", "a sequence", "null", "a scalar".
std::string_view node_kind(const YAML::Node& node);

}  // namespace hbingest::config::detail
