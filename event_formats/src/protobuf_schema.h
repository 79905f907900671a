#pragma once
// A Protobuf schema from the registry, parsed once (docs/formats.md, "Protobuf"): its file and every
// file it imports in a DescriptorPool of its own, a DynamicMessageFactory over it, and one reused
// message per message type that events name.
//
// The registry gives a schema as .proto text or as base64 of a serialized FileDescriptorProto
// (Apicurio, for schemas confluent-kafka's ProtobufSerializer registered); both are read. Imports
// resolve through the schema's references (each fetched by subject and version and read the same
// way, with its own references), and google/protobuf/*.proto files not given as references come
// from the ones compiled into libprotobuf.
//
// Not thread-safe: a schema belongs to one format's cache (SchemaCache), which is one thread's.

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hbingest/connectors/schema_registry.h"
#include "protobuf_wire_table.h"

namespace hbingest::event_formats {

class ProtobufSchema {
 public:
  // Reads `schema` and its references (asking `registry` for them). Throws BadSchema (an import
  // cycle, too many or too deep imports, a text that does not parse, a file that does not build),
  // or SchemaRegistryUnavailable when a reference cannot be fetched now.
  static std::shared_ptr<const ProtobufSchema> parse(const connectors::RegisteredSchema& schema,
                                                     connectors::SchemaRegistry& registry);

  std::int32_t id() const { return id_; }
  const google::protobuf::FileDescriptor& file() const { return *file_; }

  // The message type Confluent's message indexes name: [i] the file's i-th message, [i, j] its j-th
  // nested message, and so on. nullptr when there is none, with `why` saying which index is out of range.
  const google::protobuf::Descriptor* message_type(const std::vector<std::int32_t>& indexes, std::string& why) const;

  // What parsing a message of `type` needs: the prototype each event's message is made from (on
  // the format's arena), and whether such a message can lack a required field (a proto2
  // `required` in it or in a message it can hold, or an extension range): only then is a parsed
  // message checked for them. Made once per type and kept. And the table its messages' wire bytes
  // are read in place with (protobuf_wire.h); nullptr when they are all read through libprotobuf
  // (a message that can lack a required field, or hold extensions).
  struct MessageType {
    const google::protobuf::Message* prototype = nullptr;
    bool may_lack_required = false;
    const pbwire::Table* wire = nullptr;
  };
  const MessageType& message_info(const google::protobuf::Descriptor* type) const;

 private:
  ProtobufSchema() = default;

  std::int32_t id_ = 0;
  // Destroyed in reverse order: the factory (and its prototypes) before the pool their
  // descriptors live in.
  std::unique_ptr<google::protobuf::DescriptorPool> pool_;
  const google::protobuf::FileDescriptor* file_ = nullptr;
  std::unique_ptr<google::protobuf::DynamicMessageFactory> factory_;
  mutable pbwire::WireTables wire_tables_;
  mutable std::unordered_map<const google::protobuf::Descriptor*, MessageType> types_;
};

}  // namespace hbingest::event_formats
