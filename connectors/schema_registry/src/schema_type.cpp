#include "hbingest/connectors/schema_registry.h"

namespace hbingest::connectors {

std::string_view schema_type_name(SchemaType type) {
  switch (type) {
    case SchemaType::avro:
      return "AVRO";
    case SchemaType::protobuf:
      return "PROTOBUF";
    case SchemaType::json:
      return "JSON";
  }
  return "AVRO";
}

}  // namespace hbingest::connectors
