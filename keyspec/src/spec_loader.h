#pragma once
// YAML → SpecModel. Reports every problem of a spec at once, each naming source:line:col, the key
// path and the component.

#include <string_view>

#include "spec_model.h"

namespace YAML {
class Node;
}

namespace hbingest::keyspec::detail {

// Validates and builds a spec. Throws SpecError listing every problem, one per line:
// "<source>:<line>:<col>: <path>: component '<name>': <reason>" (path e.g. "components[1].width").
SpecModel load_spec(const YAML::Node& root, std::string_view source_name);
// Parses YAML text first; syntax errors are SpecErrors with the same shape.
SpecModel load_spec_text(std::string_view yaml, std::string_view source_name);

}  // namespace hbingest::keyspec::detail
