#pragma once
// A path into a decoded value: "payment.amount", "items[0].sku", "tags[2]", "attributes.region".
// What row mappings (`columns: - from:`), key spec fields and table templates name inside an event.
// docs/rows.md, "Inputs".
//
// Grammar: NAME ( '.' NAME | '[' INDEX ']' )*, NAME a non-empty run of any bytes but '.', '[', ']'
// ("a\.b" escapes a dot inside a name), INDEX a decimal array index. Bounded (kMaxPathSteps,
// kMaxPathBytes) so a hostile configuration cannot ask for a walk 10,000 levels deep.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::event_formats {

// One step: a member of a record / object / map by name, or an element of an array by index.
struct PathStep {
  std::string name;                    // set when !index
  std::optional<std::size_t> index{};  // set: an array element
  friend bool operator==(const PathStep&, const PathStep&) = default;
};

struct FieldPath {
  std::vector<PathStep> steps;  // never empty once parsed
  std::string text;             // as written, for messages
  // A single name step: a top-level field, which formats look up without walking.
  bool is_top_level() const { return steps.size() == 1 && !steps.front().index; }
  friend bool operator==(const FieldPath& a, const FieldPath& b) { return a.steps == b.steps; }
};

inline constexpr std::size_t kMaxPathSteps = 32;
inline constexpr std::size_t kMaxPathBytes = 1024;

class FieldPathError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws FieldPathError naming the byte position and what was expected.
FieldPath parse_field_path(std::string_view text);

}  // namespace hbingest::event_formats
