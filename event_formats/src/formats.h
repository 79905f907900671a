#pragma once
// The constructors format_factory.cpp chooses from, one per format file.

#include <memory>

#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"

namespace hbingest::event_formats {

std::unique_ptr<InputFormat> make_json_format();
std::unique_ptr<InputFormat> make_json_schema_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits);
std::unique_ptr<InputFormat> make_avro_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits);
// How the Protobuf format reads a message: its wire bytes in place where it can (protobuf_wire.h),
// or always through libprotobuf's dynamic message, the reference the tests compare the first with.
enum class ProtobufReading { in_place, through_libprotobuf };
std::unique_ptr<InputFormat> make_protobuf_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits,
                                                  ProtobufReading reading = ProtobufReading::in_place);

}  // namespace hbingest::event_formats
