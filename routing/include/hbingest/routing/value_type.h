#pragma once
// Placeholder until the typed-value codec lands (helper "values"): the names only.
#include <optional>
#include <string_view>
namespace hbingest::routing {
enum class ValueType { text, string, long_, int_, short_, double_, float_, boolean, bigdecimal, bytes };
std::optional<ValueType> value_type_named(std::string_view name);
}  // namespace hbingest::routing
