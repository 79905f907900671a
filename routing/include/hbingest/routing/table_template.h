#pragma once
// A route's table: a name, or a template over what an event carries: "events_${topic}",
// "${event_type}", "orders_${field:region}" (docs/rows.md, "Tables from templates").
//
// A value that comes from the data is allowed only when the configuration allows it (a list or a
// pattern per variable; ${topic} and ${event_type} default to the route's own topics and types), and
// must make a valid HBase table name: a hostile producer cannot create tables of its choosing or
// probe names. How many distinct tables a route may make at run time is bounded by TableSet.
// Immutable after construction; safe to share between threads.

#include <cstddef>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::routing {

// What a template variable may take: listed values, or a whole-value pattern.
struct AllowedValues {
  std::vector<std::string> values;
  std::optional<std::string> pattern;
};

// What a table template reads of one event.
struct TableInputs {
  std::string_view topic;
  std::string_view event_type;
  const keyspec::EventFields* fields = nullptr;  // for ${field:INPUT}; null: no value (a tombstone)
};

class TableTemplate {
 public:
  // `text` as configured (without namespace); `ns` the namespace every table is in. `allowed` by
  // variable ("topic", "event_type", "field:region"). Throws std::invalid_argument naming the problem
  // (an unknown variable, an unclosed "${", a variable without allowed values, a bad pattern).
  TableTemplate(std::string_view text, std::string ns, std::map<std::string, AllowedValues, std::less<>> allowed);

  bool is_template() const { return !variables_.empty(); }
  // The variables in order of appearance ("topic", "event_type", "field:region").
  const std::vector<std::string>& variables() const { return variables_; }
  // "ns:table" of a plain name (is_template() false).
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }

  // The qualified table of one event, or why it has none (a value missing, not allowed, or not
  // usable in a table name), as "table_not_allowed: ..." reason text.
  struct Resolved {
    std::string table;   // "ns:table" when ok
    std::string reason;  // empty when ok
  };
  Resolved resolve(const TableInputs& inputs) const;
  // Every table the allowed values can make, bounded by `limit` (then nullopt), or nullopt when a
  // variable is allowed by pattern only: what bootstrap and table.create_table create up front.
  std::optional<std::vector<std::string>> enumerate(std::size_t limit) const;

 private:
  struct Piece {
    std::string literal;             // text before the variable
    std::optional<std::size_t> var;  // index into variables_; none for the tail
  };
  std::string text_;
  std::string ns_;
  std::string name_;
  std::vector<std::string> variables_;
  std::vector<Piece> pieces_;
  std::vector<AllowedValues> allowed_;  // by variable index
  std::vector<std::optional<std::regex>> patterns_;
};

// A character HBase accepts in a table qualifier: [A-Za-z0-9_.-].
bool is_table_name_char(char c);

}  // namespace hbingest::routing
