#pragma once
// Input formats by name (config::EventFormat): the one place that knows every format. Adding a
// format is a file in event_formats/src, one case here and one config::EventFormat value.

#include <memory>

#include "hbingest/config/config.h"
#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"

namespace hbingest::event_formats {

// True for the formats that read a schema id from each message and ask the registry.
bool needs_schema_registry(config::EventFormat format);

// A new format of that kind. `registry` must outlive it; it may be null only for formats that do
// not need one (else std::invalid_argument).
std::unique_ptr<InputFormat> make_input_format(config::EventFormat format, connectors::SchemaRegistry* registry,
                                               SchemaCacheLimits limits = {});

}  // namespace hbingest::event_formats
