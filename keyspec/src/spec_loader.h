#pragma once
// YAML → SpecModel, with every error naming source:line:col and the component.

#include <string_view>

#include "spec_model.h"

namespace YAML {
class Node;
}

namespace hbingest::keyspec::detail {

// Validates and builds a spec. Throws SpecError "<source>:<line>:<col>: component '<name>': <reason>".
SpecModel load_spec(const YAML::Node& root, std::string_view source_name);
// Parses YAML text first; syntax errors are SpecErrors with the same shape.
SpecModel load_spec_text(std::string_view yaml, std::string_view source_name);

}  // namespace hbingest::keyspec::detail
