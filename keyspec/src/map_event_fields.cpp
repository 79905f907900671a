#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {

std::optional<FieldValue> MapEventFields::field(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return std::visit(
      [](const auto& v) -> FieldValue {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return std::string_view(v);
        } else {
          return v;
        }
      },
      it->second);
}

}  // namespace hbingest::keyspec
