#include "hbingest/routing/row_mapping.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "hbingest/event_formats/input_name.h"

namespace hbingest::routing {

namespace {

using Rule = RowMapping::Rule;

// "family:qualifier" → its parts; "family:*" → qualifier "*".
std::optional<std::pair<std::string, std::string>> split_column(std::string_view to) {
  const std::size_t colon = to.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == to.size()) return std::nullopt;
  return std::pair{std::string(to.substr(0, colon)), std::string(to.substr(colon + 1))};
}

// Appends one value as its rule's type says; a mismatch is the event's problem.
std::optional<MappingError> append_typed(const Rule& rule, std::string_view qualifier, const keyspec::FieldValue& value,
                                         std::string& out) {
  if (auto why = append_value(value, rule.type, out)) {
    return MappingError{"bad_value",
                        "column " + rule.family + ":" + std::string(qualifier) + " (from " + rule.from + "): " + *why};
  }
  return std::nullopt;
}

bool is_null(const keyspec::FieldValue& value) { return std::holds_alternative<std::monostate>(value); }

// The cells of the members of one record (a "*" or "family:*" rule).
class MemberCells final : public event_formats::Record::MemberVisitor {
 public:
  MemberCells(const Rule& rule, config::NullFields null_fields, RowCells& out)
      : rule_(rule), null_fields_(null_fields), out_(out) {}

  void member(std::string_view name, const keyspec::FieldValue& value, bool null,
              const std::function<void(std::string&)>& append_text) override {
    if (error || rule_.exclude.contains(name)) return;
    if (null) {
      null_member(name);
      return;
    }
    auto& cell = out_.cells.emplace_back();
    cell.family.append(rule_.family);
    cell.qualifier.append(name);
    if (rule_.type == ValueType::text) {
      append_text(cell.value);
    } else {
      error = append_typed(rule_, name, value, cell.value);
    }
  }

  void null_member(std::string_view name) {
    if (null_fields_ == config::NullFields::empty) {
      out_.cells.push_back({rule_.family, std::string(name), {}});
    } else if (null_fields_ == config::NullFields::delete_cell) {
      out_.deleted.push_back({rule_.family, std::string(name)});
    }
  }

  std::optional<MappingError> error;

 private:
  const Rule& rule_;
  config::NullFields null_fields_;
  RowCells& out_;
};

}  // namespace

RowMapping RowMapping::from_decode(const config::DecodeConfig& decode) {
  RowMapping mapping;
  mapping.null_fields_ =
      decode.null_fields.value_or(decode.write_null_fields ? config::NullFields::empty : config::NullFields::skip);
  if (decode.columns != config::ColumnsMode::raw) {
    Rule rule;
    rule.kind = Rule::Kind::all_fields;
    rule.from = "*";
    rule.family = decode.family;
    mapping.rules_.push_back(std::move(rule));
  }
  if (decode.columns != config::ColumnsMode::fields) {
    Rule rule;
    rule.from = "kafka:value";
    rule.raw_value = true;
    rule.family = decode.family;
    rule.qualifier = decode.raw_qualifier;
    // The same bytes as a bytes column; text so that the query API answers a packed JSON event as
    // its JSON text, as it did before columns existed (docs/rows.md, "Packed rows").
    rule.type = ValueType::text;
    mapping.rules_.push_back(std::move(rule));
  }
  mapping.families_ = {decode.family};
  return mapping;
}

RowMapping RowMapping::from_columns(const std::vector<config::ColumnConfig>& columns, config::NullFields null_fields) {
  RowMapping mapping;
  mapping.null_fields_ = null_fields;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const config::ColumnConfig& column = columns[i];
    const std::string where = column.source + ": columns[" + std::to_string(i) + "]: ";
    const auto problem = [&](const std::string& text) { problems.push_back(where + text); };
    Rule rule;
    rule.from = column.from;
    rule.source = column.source;
    rule.exclude.insert(column.exclude.begin(), column.exclude.end());
    const auto to = split_column(column.to);
    if (!to) {
      problem("to: '" + column.to + "' is not family:qualifier or family:*");
      continue;
    }
    rule.family = to->first;
    if (!std::all_of(
            rule.family.begin(), rule.family.end(),
            [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }) ||
        rule.family.front() == '.') {
      problem("to: family '" + rule.family + "' is not a name HBase accepts (A-Z a-z 0-9 _ - ., not first '.')");
      continue;
    }
    const bool every_member = to->second == "*";
    if (!every_member) rule.qualifier = to->second;
    const auto type = value_type_named(column.type);
    if (!type) {
      problem("type: '" + column.type + "' is not a value type");
      continue;
    }
    rule.type = *type;
    try {
      if (column.from == "*") {
        rule.kind = Rule::Kind::all_fields;
        if (!every_member) problem("from \"*\" writes one cell per field: write to: \"" + rule.family + ":*\"");
      } else {
        rule.input = event_formats::parse_input_name(column.from);
        const bool raw = rule.input.source == event_formats::InputSource::kafka &&
                         rule.input.kafka == event_formats::KafkaInput::value;
        if (raw) {
          rule.raw_value = true;
          if (every_member) {
            problem("from kafka:value is one cell: name its qualifier (to: \"" + rule.family + ":raw\")");
          }
          if (rule.type != ValueType::bytes && rule.type != ValueType::text) {
            problem("from kafka:value holds the message's bytes: type text or bytes, not " + column.type);
          }
        } else if (every_member) {
          rule.kind = Rule::Kind::members;
          if (rule.input.source != event_formats::InputSource::value &&
              rule.input.source != event_formats::InputSource::key) {
            problem("to \"" + column.to + "\" names each cell after a member of a record of the value or key; '" +
                    column.from + "' is not one (write to: \"family:qualifier\")");
          }
        }
      }
    } catch (const std::invalid_argument& e) {
      problem(std::string("from: ") + e.what());
      continue;
    }
    if (!rule.exclude.empty() && rule.kind == Rule::Kind::input) {
      problem("exclude applies to \"*\" and to records written as family:*");
    }
    if (std::find(mapping.families_.begin(), mapping.families_.end(), rule.family) == mapping.families_.end()) {
      mapping.families_.push_back(rule.family);
    }
    mapping.rules_.push_back(std::move(rule));
  }
  // Two rules writing one column would write it twice per event, the later silently winning.
  std::set<std::string> columns_written;
  for (const Rule& rule : mapping.rules_) {
    if (rule.qualifier.empty()) continue;
    if (!columns_written.insert(rule.family + ":" + rule.qualifier).second) {
      problems.push_back(rule.source + ": columns: " + rule.family + ":" + rule.qualifier +
                         " is written by two entries");
    }
  }
  if (!problems.empty()) {
    std::string text;
    for (const auto& p : problems) text.append(text.empty() ? "" : "\n").append(p);
    throw std::invalid_argument(text);
  }
  return mapping;
}

std::optional<MappingError> RowMapping::apply(const RowInputs& inputs, RowCells& out) const {
  out.clear();
  for (const Rule& rule : rules_) {
    if (rule.raw_value) {
      if (inputs.value == nullptr) continue;  // a tombstone has no value
      out.cells.push_back({rule.family, rule.qualifier, std::string(inputs.raw_value)});
      continue;
    }
    if (rule.kind == Rule::Kind::all_fields) {
      if (inputs.value == nullptr) continue;
      const event_formats::Record& record = *inputs.value;
      const std::size_t members = record.member_count();
      out.cells.reserve(out.cells.size() + members);
      MemberCells cells(rule, null_fields_, out);
      for (std::size_t i = 0; i < members; ++i) {
        // The default mapping's loop, the hot path: no visitor call per member for text.
        const std::string_view name = record.member_name(i);
        if (!rule.exclude.empty() && rule.exclude.contains(name)) continue;
        if (record.member_is_null(i)) {
          cells.null_member(name);
          continue;
        }
        // Built in place: a Cell made first and moved in copied its three strings again (perf).
        auto& cell = out.cells.emplace_back();
        cell.family.append(rule.family);
        cell.qualifier.append(name);
        if (rule.type == ValueType::text) {
          record.append_text(i, cell.value);
        } else if (auto error = append_typed(rule, name, record.member_value(i), cell.value)) {
          return error;
        }
      }
      continue;
    }
    if (rule.kind == Rule::Kind::members) {
      MemberCells cells(rule, null_fields_, out);
      inputs.fields->visit_members(rule.input, cells);
      if (cells.error) return cells.error;
      continue;
    }
    // One input, one column.
    const auto value = inputs.fields->input(rule.input);
    if (!value) continue;  // absent: no cell, as a missing field writes none
    if (is_null(*value)) {
      if (null_fields_ == config::NullFields::empty) out.cells.push_back({rule.family, rule.qualifier, {}});
      if (null_fields_ == config::NullFields::delete_cell) out.deleted.push_back({rule.family, rule.qualifier});
      continue;
    }
    auto& cell = out.cells.emplace_back();
    cell.family = rule.family;
    cell.qualifier = rule.qualifier;
    if (rule.type != ValueType::text) {
      if (auto error = append_typed(rule, rule.qualifier, *value, cell.value)) return error;
    } else {
      inputs.fields->append_text(rule.input, cell.value);
    }
  }
  return std::nullopt;
}

ValueType RowMapping::type_of(std::string_view family, std::string_view qualifier) const {
  const Rule* by_family = nullptr;
  for (const Rule& rule : rules_) {
    if (rule.family != family) continue;
    if (rule.qualifier == qualifier) return rule.type;
    if (rule.qualifier.empty() && by_family == nullptr) by_family = &rule;
  }
  return by_family != nullptr ? by_family->type : ValueType::text;
}

std::optional<std::set<std::string>> RowMapping::known_qualifiers() const {
  std::set<std::string> qualifiers;
  for (const Rule& rule : rules_) {
    if (rule.qualifier.empty()) return std::nullopt;
    qualifiers.insert(rule.family + ":" + rule.qualifier);
  }
  return qualifiers;
}

std::optional<std::pair<std::string, std::string>> RowMapping::packed_column() const {
  for (const Rule& rule : rules_) {
    if (rule.raw_value) return std::pair{rule.family, rule.qualifier};
  }
  return std::nullopt;
}

bool RowMapping::reads_value() const {
  return std::any_of(rules_.begin(), rules_.end(), [](const Rule& rule) {
    return rule.raw_value || rule.kind == Rule::Kind::all_fields || rule.input.reads_value();
  });
}

}  // namespace hbingest::routing
