#pragma once
// Test support: what a Record answers for every path into it, as one line per path, so that two
// records of the same event (JSON and its Avro or Protobuf twin, the in-place Protobuf reading and
// libprotobuf's) can be compared path by path. From each top-level member down (a bounded number of
// levels): at(), append_text_at() and visit_members() of the path; a record's or map's members by
// name and an array's first elements by index; and for every path the steps that must find nothing
// (a missing name, an index past the end, 2^62, a step into a scalar or a null).

#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/event_formats/record.h"

namespace hbingest::event_formats::path_probe {

// A FieldValue as text that tells every value apart (a double by its bits).
inline std::string probe_value_text(const keyspec::FieldValue& value) {
  std::string out = std::to_string(value.index()) + ":";
  if (const auto* s = std::get_if<std::string_view>(&value)) out += std::string(*s);
  if (const auto* n = std::get_if<std::int64_t>(&value)) out += std::to_string(*n);
  if (const auto* d = std::get_if<double>(&value)) out += std::to_string(std::bit_cast<std::uint64_t>(*d));
  if (const auto* b = std::get_if<bool>(&value)) out += *b ? "true" : "false";
  return out;
}

// `name` as a path step ("a.b" as "a\.b"); nullopt for a name no path can spell.
inline std::optional<std::string> path_step(std::string_view name) {
  if (name.empty() || name.find_first_of("[]\\") != std::string_view::npos) return std::nullopt;
  std::string out;
  for (const char c : name) {
    if (c == '.') out += '\\';
    out += c;
  }
  return out;
}

class MemberLines final : public Record::MemberVisitor {
 public:
  void member(std::string_view name, const keyspec::FieldValue& value, bool is_null,
              const std::function<void(std::string&)>& append_text) override {
    std::string text;
    append_text(text);
    names.emplace_back(name);
    line += " [" + std::string(name) + "=" + probe_value_text(value) + (is_null ? " null" : "") + " '" + text + "']";
  }
  std::vector<std::string> names;
  std::string line;
};

struct PathProbeLimits {
  int depth = 4;                 // steps below a top-level member
  std::size_t elements = 3;      // of each array
  std::size_t max_paths = 5000;  // in all
};

inline void probe_path(const Record& record, const std::string& text, int depth, const PathProbeLimits& limits,
                       std::map<std::string, std::string>& out) {
  if (out.size() >= limits.max_paths || out.count(text) != 0) return;
  const FieldPath path = parse_field_path(text);
  const auto value = record.at(path);
  std::string cell;
  const bool has_text = record.append_text_at(path, cell);
  MemberLines members;
  const bool visited = record.visit_members(path, members);
  std::string line = value ? probe_value_text(*value) : "absent";
  line += has_text ? " text '" + cell + "'" : " no text";
  if (visited) line += " members" + members.line;
  out[text] = line;
  if (!value) return;
  // Steps that find nothing, whatever is here.
  for (const char* nothing : {".no_such_step", "[4611686018427387904]"}) {
    if (path.steps.size() < kMaxPathSteps) probe_path(record, text + nothing, limits.depth, limits, out);
  }
  if (depth >= limits.depth || path.steps.size() + 1 >= kMaxPathSteps) return;
  if (visited) {
    std::set<std::string> seen;
    for (const auto& name : members.names) {
      const auto step = path_step(name);
      if (step && seen.insert(*step).second) probe_path(record, text + "." + *step, depth + 1, limits, out);
    }
    return;
  }
  if (std::holds_alternative<keyspec::NestedValue>(*value)) {
    for (std::size_t i = 0; i <= limits.elements; ++i) {
      const std::string element = text + "[" + std::to_string(i) + "]";
      probe_path(record, element, depth + 1, limits, out);
      if (out[element] == "absent no text") break;  // past the end (probed once)
    }
  } else {
    probe_path(record, text + "[0]", limits.depth, limits, out);  // a step into a scalar
  }
}

// Every path into `record` (see the top of this file), path text → what the record answers.
inline std::map<std::string, std::string> probe_paths(const Record& record, PathProbeLimits limits = {}) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < record.member_count(); ++i) {
    if (const auto step = path_step(record.member_name(i))) probe_path(record, *step, 0, limits, out);
  }
  return out;
}

// The probes as one text, a line a path (what a failed comparison prints).
inline std::string probe_text(const std::map<std::string, std::string>& probes) {
  std::string out;
  for (const auto& [path, line] : probes) out += path + " = " + line + "\n";
  return out;
}

// The paths `a` and `b` answer differently (or only one of them probed), one a line, but for those
// in `except` (and the parent paths whose text or members show them).
inline std::string probe_differences(const std::map<std::string, std::string>& a,
                                     const std::map<std::string, std::string>& b, const std::set<std::string>& except) {
  std::set<std::string> paths;
  for (const auto& [path, line] : a) paths.insert(path);
  for (const auto& [path, line] : b) paths.insert(path);
  std::string out;
  for (const auto& path : paths) {
    bool excepted = false;
    for (const auto& e : except) excepted = excepted || path.starts_with(e) || e.starts_with(path);
    if (excepted) continue;
    const auto x = a.find(path);
    const auto y = b.find(path);
    const std::string left = x != a.end() ? x->second : "(not probed)";
    const std::string right = y != b.end() ? y->second : "(not probed)";
    if (left != right) out += path + ": " + left + "  vs  " + right + "\n";
  }
  return out;
}

}  // namespace hbingest::event_formats::path_probe
