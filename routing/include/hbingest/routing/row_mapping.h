#pragma once
// How an event becomes the cells of its row (docs/rows.md): a route's `columns`, or by default every
// top-level field of the value as text in decode.family (decode.columns: fields, raw or both).
// Immutable after construction; apply() may be called from one thread per mapping user at a time
// with its own output (it keeps no state between events).

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/event_formats/input_name.h"
#include "hbingest/event_formats/message_fields.h"
#include "hbingest/event_formats/record.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/value_type.h"

namespace hbingest::routing {

// What a mapping reads of one event.
struct RowInputs {
  const event_formats::Record* value = nullptr;          // the decoded value; null for a tombstone
  const event_formats::MessageFields* fields = nullptr;  // every input (value paths, key, headers, kafka:)
  std::string_view raw_value;                            // the message value's bytes as received
};

// What a mapping made of one event.
struct RowCells {
  std::vector<connectors::Cell> cells;
  std::vector<connectors::ColumnRef> deleted;  // null_fields: delete_cell
  void clear() {
    cells.clear();
    deleted.clear();
  }
};

// An event whose fields do not fit the mapping (a long given "abc"): invalid, with the field named.
struct MappingError {
  std::string reason;   // bad_value
  std::string message;  // "column p:amount (from payment.amount): 2.5 is not a whole number for type long"
};

class RowMapping {
 public:
  // One rule of `columns`, parsed.
  struct Rule {
    enum class Kind {
      all_fields,  // from "*": every top-level field of the value
      members,     // from a record, to "family:*": one cell per member
      input,       // from one input, to "family:qualifier"
    };
    Kind kind = Kind::input;
    std::string from;                  // as configured
    event_formats::InputName input{};  // input / members: what it reads
    bool raw_value = false;            // kafka:value: the message bytes as received (the packed row)
    std::string family;
    std::string qualifier;  // empty for all_fields / members
    ValueType type = ValueType::text;
    std::set<std::string, std::less<>> exclude;
    std::string source;  // config line
  };

  // The default mapping: decode.columns in decode.family.
  static RowMapping from_decode(const config::DecodeConfig& decode);
  // A route's `columns` (null_fields from the route, else decode's). Throws std::invalid_argument
  // with one line per problem, each naming the entry's config line.
  static RowMapping from_columns(const std::vector<config::ColumnConfig>& columns, config::NullFields null_fields);

  // The cells (and column deletes) of one event, in rule order; `out` is cleared first.
  std::optional<MappingError> apply(const RowInputs& inputs, RowCells& out) const;

  // Every family the mapping writes: what bootstrap creates and the table watch checks.
  const std::vector<std::string>& families() const { return families_; }
  // How the query API renders a stored cell: the type of the rule that writes `family:qualifier`
  // (an explicit qualifier first, then a family's "*" rule), text when no rule says.
  ValueType type_of(std::string_view family, std::string_view qualifier) const;
  // The qualifiers a query may ask for when the mapping fixes them (no "*" rule); nullopt: any.
  std::optional<std::set<std::string>> known_qualifiers() const;
  // The qualifier holding the whole message value (a kafka:value rule), if any: the packed row.
  std::optional<std::pair<std::string, std::string>> packed_column() const;
  // True when some rule reads the value (a tombstone's delete may use only the key and metadata).
  bool reads_value() const;
  const std::vector<Rule>& rules() const { return rules_; }
  config::NullFields null_fields() const { return null_fields_; }

 private:
  std::vector<Rule> rules_;
  config::NullFields null_fields_ = config::NullFields::skip;
  std::vector<std::string> families_;
};

}  // namespace hbingest::routing
