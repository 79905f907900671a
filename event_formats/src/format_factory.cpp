#include "hbingest/event_formats/format_factory.h"

#include <stdexcept>
#include <string>

#include "formats.h"

namespace hbingest::event_formats {

bool needs_schema_registry(config::EventFormat format) { return format != config::EventFormat::json; }

std::unique_ptr<InputFormat> make_input_format(config::EventFormat format, connectors::SchemaRegistry* registry,
                                               SchemaCacheLimits limits) {
  if (needs_schema_registry(format) && registry == nullptr) {
    throw std::invalid_argument("format " + std::string(config::event_format_name(format)) +
                                " needs schema_registry.url");
  }
  switch (format) {
    case config::EventFormat::json:
      return make_json_format();
    case config::EventFormat::json_schema:
      return make_json_schema_format(*registry, limits);
    case config::EventFormat::avro:
      return make_avro_format(*registry, limits);
    case config::EventFormat::protobuf:
      return make_protobuf_format(*registry, limits);
  }
  throw std::invalid_argument("unknown event format");
}

}  // namespace hbingest::event_formats
