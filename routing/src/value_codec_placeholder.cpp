#include "hbingest/routing/value_codec.h"
namespace hbingest::routing {
std::optional<ValueType> value_type_named(std::string_view name) {
  if (name == "text") return ValueType::text;
  if (name == "bytes") return ValueType::bytes;
  return std::nullopt;
}
std::optional<std::string> encode_value(const keyspec::FieldValue& value, ValueType, std::string& out) {
  if (const auto* s = std::get_if<std::string_view>(&value)) {
    out.append(*s);
    return std::nullopt;
  }
  return "placeholder";
}
}  // namespace hbingest::routing
