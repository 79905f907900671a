#pragma once
// The schema-registry seam: Avro, Protobuf and JSON Schema events carry a schema id (the Confluent
// wire format), and the input formats (event_formats/) ask a SchemaRegistry for the schema. The
// daemon's is the HTTP client of the Confluent REST API (http_schema_registry.h); unit tests fake it.
//
// A registry gives two kinds of "no": SchemaNotFound is a definite answer (the id or subject
// version does not exist: an event naming it is invalid), SchemaRegistryUnavailable is no answer
// (unreachable, timed out, 5xx, an answer that is not the API's): the event is valid as far as
// anyone knows and must wait until the registry answers.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::connectors {

enum class SchemaType { avro, protobuf, json };

// "AVRO", "PROTOBUF", "JSON": the registry's own names (an absent schemaType means AVRO).
std::string_view schema_type_name(SchemaType type);

// An import of another subject's schema (Protobuf imports, Avro named types, JSON $refs).
struct SchemaReference {
  std::string name;  // as the schema refers to it: the .proto import path, the Avro full name, the $ref
  std::string subject;
  std::int32_t version = 0;
};

struct RegisteredSchema {
  std::int32_t id = 0;  // the registry's global id; 0 when fetched by subject and version without one
  SchemaType type = SchemaType::avro;
  // As the registry gives it: Avro JSON, JSON Schema JSON, Protobuf `.proto` text or base64 of a
  // serialized FileDescriptorProto (Apicurio answers the latter for schemas confluent-kafka registered).
  std::string text;
  std::vector<SchemaReference> references;
};

class SchemaNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SchemaRegistryUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each call may block up to the client's timeout. Implementations say in what() which URL and id
// they asked for. Thread-safe.
class SchemaRegistry {
 public:
  virtual ~SchemaRegistry() = default;
  // Throws SchemaNotFound or SchemaRegistryUnavailable.
  virtual RegisteredSchema schema_by_id(std::int32_t id) = 0;
  // A reference's target. Throws SchemaNotFound or SchemaRegistryUnavailable.
  virtual RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) = 0;
  // Where it asks, for messages ("http://127.0.0.1:18081/apis/ccompat/v7"), without credentials.
  virtual std::string describe() const = 0;
};

}  // namespace hbingest::connectors
