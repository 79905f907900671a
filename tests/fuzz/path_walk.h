#pragma once
// Fuzz support: walks a field path into a Record a prefix at a time and checks what the record
// answers against itself (field_path_fuzz.cpp says which properties). Aborts on a violation.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hbingest/event_formats/field_path.h"
#include "hbingest/event_formats/record.h"

namespace hbingest::fuzz {

using event_formats::FieldPath;
using event_formats::PathStep;
using event_formats::Record;
using keyspec::FieldValue;

inline void path_check(bool ok) {
  if (!ok) std::abort();
}

// Equal values, a NaN equal to a NaN (a float field may hold one).
inline bool same_value(const std::optional<FieldValue>& a, const std::optional<FieldValue>& b) {
  if (a && b) {
    const auto* x = std::get_if<double>(&*a);
    const auto* y = std::get_if<double>(&*b);
    if (x != nullptr && y != nullptr && std::isnan(*x) && std::isnan(*y)) return true;
  }
  return a == b;
}

struct Member {
  std::string name;
  FieldValue value;
  bool null;
  std::string text;
};
class Members final : public Record::MemberVisitor {
 public:
  void member(std::string_view name, const FieldValue& value, bool is_null,
              const std::function<void(std::string&)>& append_text) override {
    Member m{std::string(name), value, is_null, {}};
    append_text(m.text);
    path_check(is_null == std::holds_alternative<std::monostate>(value));
    if (is_null) path_check(m.text.empty());
    members.push_back(std::move(m));
  }
  std::vector<Member> members;
};

inline void walk_path(const Record& event, const FieldPath& full) {
  FieldPath path;
  bool below_nothing = false;  // an earlier prefix was absent or a scalar
  for (const auto& step : full.steps) {
    path.steps.push_back(step);
    const auto value = event.at(path);
    std::string text;
    const bool has_text = event.append_text_at(path, text);
    path_check(value.has_value() == has_text);
    if (below_nothing) path_check(!value);
    if (value && std::holds_alternative<std::monostate>(*value)) path_check(text.empty());
    if (path.is_top_level()) path_check(same_value(value, event.field(path.steps.front().name)));
    Members members;
    const bool visited = event.visit_members(path, members);
    if (visited) path_check(value && std::holds_alternative<keyspec::NestedValue>(*value));
    // The last member of each name is what one more step answers (names a path can spell).
    for (std::size_t i = 0; visited && i < members.members.size() && i < 64; ++i) {
      const Member& m = members.members[i];
      bool last = true;
      for (std::size_t j = i + 1; j < members.members.size(); ++j) last = last && members.members[j].name != m.name;
      if (!last || m.name.empty() || m.name.find_first_of("[]\\") != std::string::npos ||
          path.steps.size() >= event_formats::kMaxPathSteps) {
        continue;
      }
      FieldPath deeper = path;
      deeper.steps.push_back(PathStep{m.name});
      const auto at = event.at(deeper);
      path_check(at.has_value());
      std::string deeper_text;
      path_check(event.append_text_at(deeper, deeper_text));
      path_check(deeper_text == m.text);
      path_check(same_value(at, m.value));
    }
    if (!value || !std::holds_alternative<keyspec::NestedValue>(*value)) below_nothing = true;
  }
}

}  // namespace hbingest::fuzz
