#pragma once
// Placeholder until the typed-value codec lands (helper "values").
#include <optional>
#include <string>
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/value_type.h"
namespace hbingest::routing {
std::optional<std::string> encode_value(const keyspec::FieldValue& value, ValueType type, std::string& out);
}  // namespace hbingest::routing
