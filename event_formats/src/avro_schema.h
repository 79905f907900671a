#pragma once
// An Avro writer schema as the Avro format uses it: avro-c parses and checks the schema, and a tree
// of nodes made from avro-c's keeps what messages are read with (field names, enum symbols, fixed
// sizes, which types are written in zero bytes) and what avro-c 1.11.1 does not know (logical
// types, which it does not parse). Made once per schema id (SchemaCache). docs/formats.md, "Avro".

#include <avro.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hbingest/connectors/schema_registry.h"

namespace hbingest::event_formats::avro {

// avro-c's schema handle, given back once (the format holds no other avro-c handle).
struct SchemaDeleter {
  void operator()(avro_obj_t* schema) const { avro_schema_decref(schema); }
};
using SchemaPtr = std::unique_ptr<avro_obj_t, SchemaDeleter>;

// Deeper schemas (records in records, arrays of maps, ...) are refused, and messages of recursive
// schemas nested deeper are invalid: it bounds every recursion over a schema or a value.
inline constexpr int kMaxNesting = 64;

enum class LogicalType {
  none,
  timestamp_millis,  // long: epoch ms
  timestamp_micros,  // long: epoch µs, read as ms (floor)
  date,              // int: days since the epoch, read as that int
  time_millis,       // int: ms after midnight, read as that int
  decimal,           // bytes or fixed: unscaled big-endian two's complement, with scale
  uuid,              // string
};

struct Node {
  struct Field {
    std::string name;
    const Node* node = nullptr;
  };
  avro_type_t type = AVRO_NULL;  // never AVRO_LINK: a named reference is its target's node
  LogicalType logical = LogicalType::none;
  int scale = 0;                      // decimal
  std::int64_t fixed_size = 0;        // fixed
  std::vector<Field> fields;          // record, in schema order
  std::vector<std::string> symbols;   // enum
  std::vector<const Node*> branches;  // union
  const Node* items = nullptr;        // array items, map values
  bool zero_bytes = false;            // a value of this type can be written in no bytes (null, {})
  std::string name;                   // named types' full name, for messages
};

// avro-c's parsed schema is not kept: the nodes hold copies of what messages are read with.
struct Schema {
  std::deque<Node> nodes;  // a deque: nodes point at each other
  const Node* root = nullptr;
};

// Parses a registered Avro schema. A top level that is not a record, a schema nested deeper than
// kMaxNesting, or text avro-c refuses: BadSchema, with avro-c's reason. The schema's references
// (named types registered under other subjects) are fetched through `registry` and defined where
// the schema first names them (may throw the registry's SchemaNotFound / SchemaRegistryUnavailable).
std::shared_ptr<const Schema> parse_schema(const connectors::RegisteredSchema& registered,
                                           connectors::SchemaRegistry& registry);

}  // namespace hbingest::event_formats::avro
