#include "hbingest/routing/table_template.h"

#include <algorithm>
#include <stdexcept>

#include "hbingest/event_formats/input_name.h"

namespace hbingest::routing {

namespace {

// HBase's limit on a table qualifier (TableName.isLegalTableQualifierName allows more, but names this
// long are a hostile producer's, not a schema's).
constexpr std::size_t kMaxTableNameBytes = 200;

// HBase's TableName refuses a qualifier starting with '.' or '-' (isLegalTableQualifierName),
// though both may follow.
bool starts_legally(std::string_view qualifier) {
  return qualifier.empty() || (qualifier.front() != '.' && qualifier.front() != '-');
}

bool known_variable(std::string_view name) {
  return name == "topic" || name == "event_type" || (name.starts_with("field:") && name.size() > 6);
}

std::string text_of(const keyspec::FieldValue& value) {
  if (const auto* s = std::get_if<std::string_view>(&value)) return std::string(*s);
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return {};
}

}  // namespace

bool is_table_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

TableTemplate::TableTemplate(std::string_view text, std::string ns,
                             std::map<std::string, AllowedValues, std::less<>> allowed)
    : text_(text), ns_(std::move(ns)) {
  std::size_t at = 0;
  std::string literal;
  while (at < text.size()) {
    const std::size_t open = text.find("${", at);
    if (open == std::string_view::npos) {
      literal.append(text.substr(at));
      break;
    }
    literal.append(text.substr(at, open - at));
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) throw std::invalid_argument("table '" + text_ + "': '${' without '}'");
    const std::string variable(text.substr(open + 2, close - open - 2));
    if (!known_variable(variable)) {
      throw std::invalid_argument("table '" + text_ + "': unknown variable '${" + variable +
                                  "}' (use ${topic}, ${event_type} or ${field:INPUT})");
    }
    if (variable.starts_with("field:")) {
      // Read by the input grammar at run time: an input it refuses would have no value in any event.
      try {
        (void)event_formats::parse_input_name(std::string_view(variable).substr(6));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("table '" + text_ + "': ${" + variable + "}: " + e.what());
      }
    }
    const auto found = std::find(variables_.begin(), variables_.end(), variable);
    const std::size_t index = static_cast<std::size_t>(found - variables_.begin());
    if (found == variables_.end()) variables_.push_back(variable);
    pieces_.push_back(Piece{std::move(literal), index});
    literal.clear();
    at = close + 1;
  }
  pieces_.push_back(Piece{std::move(literal), std::nullopt});
  for (const auto& piece : pieces_) {
    for (const char c : piece.literal) {
      if (!is_table_name_char(c)) {
        throw std::invalid_argument("table '" + text_ + "': '" + std::string(1, c) +
                                    "' is not allowed in an HBase table name (A-Z a-z 0-9 _ . -)");
      }
    }
  }
  if (!starts_legally(pieces_.front().literal)) {
    throw std::invalid_argument("table '" + text_ + "': an HBase table name cannot start with '" +
                                std::string(1, pieces_.front().literal.front()) + "'");
  }
  if (variables_.empty()) name_ = ns_ + ":" + text_;
  for (const auto& variable : variables_) {
    const auto it = allowed.find(variable);
    if (it == allowed.end() || (it->second.values.empty() && !it->second.pattern)) {
      throw std::invalid_argument("table '" + text_ + "': ${" + variable +
                                  "} comes from the data: list the values it may take in table_values." + variable +
                                  " (a list or {pattern: REGEX})");
    }
    // The variable whose value starts the table name (no literal before it).
    const bool starts_name =
        pieces_.front().literal.empty() && pieces_.front().var && variables_[*pieces_.front().var] == variable;
    for (const auto& value : it->second.values) {
      if (value.empty() || !std::all_of(value.begin(), value.end(), is_table_name_char)) {
        throw std::invalid_argument("table_values." + variable + ": '" + value +
                                    "' cannot be part of an HBase table name (A-Z a-z 0-9 _ . -)");
      }
      if (starts_name && !starts_legally(value)) {
        throw std::invalid_argument("table_values." + variable + ": '" + value + "' would start table '" + text_ +
                                    "' with '" + value.substr(0, 1) + "', which HBase refuses as a first character");
      }
    }
    allowed_.push_back(it->second);
    if (it->second.pattern) {
      try {
        patterns_.emplace_back(std::regex(*it->second.pattern, std::regex::ECMAScript));
      } catch (const std::regex_error& e) {
        throw std::invalid_argument("table_values." + variable + ".pattern: not a regular expression: " + e.what());
      }
    } else {
      patterns_.emplace_back();
    }
  }
  for (const auto& [variable, values] : allowed) {
    if (std::find(variables_.begin(), variables_.end(), variable) == variables_.end()) {
      throw std::invalid_argument("table_values." + variable + ": table '" + text_ + "' has no ${" + variable + "}");
    }
  }
}

TableTemplate::Resolved TableTemplate::resolve(const TableInputs& inputs) const {
  if (variables_.empty()) return {name_, {}};
  std::string table = ns_ + ":";
  for (const auto& piece : pieces_) {
    table += piece.literal;
    if (!piece.var) continue;
    const std::string& variable = variables_[*piece.var];
    std::string value;
    if (variable == "topic") {
      value = inputs.topic;
    } else if (variable == "event_type") {
      value = inputs.event_type;
    } else if (inputs.fields != nullptr) {
      const auto field = inputs.fields->field(std::string_view(variable).substr(6));
      if (field) value = text_of(*field);
    }
    if (value.empty()) return {{}, "${" + variable + "} of table '" + text_ + "' has no value in this event"};
    const AllowedValues& allowed = allowed_[*piece.var];
    const bool listed = std::find(allowed.values.begin(), allowed.values.end(), value) != allowed.values.end();
    const auto& pattern = patterns_[*piece.var];
    // Bounded before the regex sees it: a pattern's worst case grows with the input.
    const bool matches = !listed && pattern && value.size() <= kMaxTableNameBytes && std::regex_match(value, *pattern);
    if (!listed && !matches) {
      return {{},
              "${" + variable + "} of table '" + text_ + "' is '" + value.substr(0, 64) +
                  (value.size() > 64 ? "...'" : "'") + ", which table_values." + variable + " does not allow"};
    }
    if (!std::all_of(value.begin(), value.end(), is_table_name_char)) {
      return {{},
              "${" + variable + "} of table '" + text_ + "' is '" + value.substr(0, 64) +
                  "', which has characters an HBase table name cannot hold"};
    }
    table += value;
  }
  if (!starts_legally(std::string_view(table).substr(ns_.size() + 1))) {
    return {{},
            "table '" + text_ + "' would be '" + table.substr(ns_.size() + 1, 64) +
                "', whose first character HBase refuses ('.' or '-')"};
  }
  if (table.size() - ns_.size() - 1 > kMaxTableNameBytes) {
    return {{}, "table '" + text_ + "' would be " + std::to_string(table.size()) + " bytes long"};
  }
  return {std::move(table), {}};
}

std::optional<std::vector<std::string>> TableTemplate::enumerate(std::size_t limit) const {
  if (variables_.empty()) return std::vector<std::string>{name_};
  for (const auto& allowed : allowed_) {
    if (allowed.values.empty()) return std::nullopt;
  }
  std::vector<std::string> tables;
  std::vector<std::size_t> choice(variables_.size(), 0);
  while (true) {
    std::string table = ns_ + ":";
    for (const auto& piece : pieces_) {
      table += piece.literal;
      if (piece.var) table += allowed_[*piece.var].values[choice[*piece.var]];
    }
    if (tables.size() == limit) return std::nullopt;
    tables.push_back(std::move(table));
    std::size_t i = 0;
    for (; i < choice.size(); ++i) {
      if (++choice[i] < allowed_[i].values.size()) break;
      choice[i] = 0;
    }
    if (i == choice.size()) break;
  }
  return tables;
}

}  // namespace hbingest::routing
