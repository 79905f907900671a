#include "reader.h"

#include <utility>

#include "substitution.h"

namespace hbingest::config::detail {

Reader::Reader(std::string source, std::filesystem::path base_dir)
    : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

void Reader::problem(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  std::string line = source_;
  if (!mark.is_null()) {
    line += ':' + std::to_string(mark.line + 1) + ':' + std::to_string(mark.column + 1);
  }
  line += ": ";
  if (!path.empty()) {
    line += path;
    line += ": ";
  }
  line += message;
  problems_.push_back(std::move(line));
}

void Reader::problem_at(std::string_view path, std::string_view message) {
  std::string_view probe = path;
  while (!probe.empty()) {
    if (const auto it = marks_.find(probe); it != marks_.end()) {
      problem(it->second, path, message);
      return;
    }
    const std::size_t cut = probe.find_last_of(".[");
    probe = cut == std::string_view::npos ? std::string_view{} : probe.substr(0, cut);
  }
  YAML::Mark top;
  top.line = 0;
  top.column = 0;
  problem(top, path, message);
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
  try {
    return substitute(node.Scalar(), base_dir_);
  } catch (const SubstitutionError& e) {
    problem(node.Mark(), path, e.what());
    return std::nullopt;
  }
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
