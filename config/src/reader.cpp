#include "reader.h"

#include <algorithm>
#include <utility>

#include "hbingest/support/secrets.h"
#include "substitution.h"

namespace hbingest::config::detail {

Reader::Reader(std::string source, std::filesystem::path base_dir)
    : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

namespace {

// "source:line:col: path: message", the message scrubbed of `secrets`.
std::string located(const std::string& source, const YAML::Mark& mark, std::string_view path, std::string_view message,
                    const std::vector<std::string>& secrets) {
  std::string line = source;
  if (!mark.is_null()) {
    line += ':' + std::to_string(mark.line + 1) + ':' + std::to_string(mark.column + 1);
  }
  line += ": ";
  if (!path.empty()) {
    line += path;
    line += ": ";
  }
  line += support::scrub(message, secrets);
  return line;
}

}  // namespace

void Reader::problem(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  problem_paths_.emplace(path);
  problems_.push_back(located(source_, mark, path, message, secrets_));
}

void Reader::warning_at(std::string_view path, std::string_view message) {
  warnings_.push_back(located(source_, mark_or_parent(path), path, message, secrets_));
}

void Reader::problem_at(std::string_view path, std::string_view message) {
  problem(mark_or_parent(path), path, message);
}

YAML::Mark Reader::mark_or_parent(std::string_view path) const {
  std::string_view probe = path;
  while (!probe.empty()) {
    if (const auto it = marks_.find(probe); it != marks_.end()) return it->second;
    const std::size_t cut = probe.find_last_of(".[");
    probe = cut == std::string_view::npos ? std::string_view{} : probe.substr(0, cut);
  }
  YAML::Mark top;
  top.line = 0;
  top.column = 0;
  return top;
}

void Reader::remember(std::string path, const YAML::Mark& mark) { marks_.insert_or_assign(std::move(path), mark); }

bool Reader::seen(std::string_view path) const { return marks_.find(path) != marks_.end(); }

std::optional<YAML::Mark> Reader::mark_of(std::string_view path) const {
  if (const auto it = marks_.find(path); it != marks_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::string> Reader::scalar(const YAML::Node& node, std::string_view path, std::string_view expected) {
  if (!node.IsScalar()) {
    problem(node.Mark(), path, "expected " + std::string(expected) + ", got " + std::string(node_kind(node)));
    return std::nullopt;
  }
  const std::string& written = node.Scalar();
  // "$${" escapes are substituted too, so every scalar goes through substitute().
  if (has_reference(written)) references_.insert_or_assign(std::string(path), written);
  try {
    std::vector<std::string> from_files;
    std::string value = substitute(written, base_dir_, &from_files);
    for (auto& content : from_files) add_secret(std::move(content), path);
    if (support::is_secret_key(path)) add_secret(value, path);
    return value;
  } catch (const SubstitutionError& e) {
    problem(node.Mark(), path, e.what());
    return std::nullopt;
  }
}

std::string Reader::shown(std::string_view path, std::string_view text, bool quoted) const {
  if (const auto it = references_.find(path); it != references_.end()) return "the value of '" + it->second + "'";
  return quoted ? "'" + std::string(text) + "'" : std::string(text);
}

std::string Reader::invalid(std::string_view path, std::string_view detail, std::string_view expected) const {
  if (const auto it = references_.find(path); it != references_.end()) {
    return "the value of '" + it->second + "' is not " + std::string(expected);
  }
  return std::string(detail);
}

void Reader::add_secret(std::string value, std::string_view path) {
  if (value.empty() || std::find(secrets_.begin(), secrets_.end(), value) != secrets_.end()) return;
  if (value.size() < support::kMinScrubbedLength) {
    warning_at(path, "this secret is shorter than " + std::to_string(support::kMinScrubbedLength) +
                         " characters: too short to be a secret, and too short to be scrubbed from logs");
  }
  secrets_.push_back(std::move(value));
}

std::string Reader::location(const YAML::Mark& mark) const {
  return source_ + ':' + std::to_string(mark.is_null() ? 1 : mark.line + 1);
}

std::string_view node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing (null)";
}

}  // namespace hbingest::config::detail
