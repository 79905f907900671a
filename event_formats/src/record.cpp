#include "hbingest/event_formats/record.h"

#include "cell_text.h"

namespace hbingest::event_formats {

void append_value_text(const keyspec::FieldValue& value, std::string& out) {
  if (const auto* s = std::get_if<std::string_view>(&value)) {
    out.append(*s);
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    append_integer(*i, out);
  } else if (const auto* d = std::get_if<double>(&value)) {
    append_double(*d, out);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out.append(*b ? "true" : "false");
  }
}

std::optional<std::size_t> Record::top_level_member(std::string_view name) const {
  std::optional<std::size_t> found;
  for (std::size_t i = 0, n = member_count(); i < n; ++i) {
    if (member_name(i) == name) found = i;
  }
  return found;
}

std::optional<keyspec::FieldValue> Record::at(const FieldPath& path) const {
  if (!path.is_top_level()) return std::nullopt;
  const auto i = top_level_member(path.steps.front().name);
  if (!i) return std::nullopt;
  return member_value(*i);
}

bool Record::append_text_at(const FieldPath& path, std::string& out) const {
  if (!path.is_top_level()) return false;
  const auto i = top_level_member(path.steps.front().name);
  if (!i) return false;
  append_text(*i, out);
  return true;
}

bool Record::visit_members(const FieldPath& path, MemberVisitor& visit) const {
  if (!path.steps.empty()) return false;
  for (std::size_t i = 0, n = member_count(); i < n; ++i) {
    visit.member(member_name(i), member_value(i), member_is_null(i), [&](std::string& out) { append_text(i, out); });
  }
  return true;
}

}  // namespace hbingest::event_formats
