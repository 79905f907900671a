#pragma once
// JSON text → MapEventFields, for the CLI, tests and tools (the pipeline reads events itself).
//
// Top-level members of one JSON object become fields: strings, integers (int64), floats, booleans
// and null keep their type; nested objects and arrays are kept as their minified JSON text.
// Thread safety: stateless, safe from any thread.

#include <string_view>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {

// Throws std::invalid_argument ("event JSON: <reason>") when `json` is not one JSON object.
MapEventFields event_fields_from_json(std::string_view json);

}  // namespace hbingest::keyspec
