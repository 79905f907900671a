#pragma once
// An Avro writer schema as the Avro format uses it: avro-c's parsed schema and generic value class,
// and a tree of nodes that adds what avro-c 1.11.1 does not know (logical types, which it does not
// parse) and what the format looks up per message (field names, enum symbols, which types can be
// written in zero bytes). Made once per schema id (SchemaCache). docs/formats.md, "Avro".

#include <avro.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "hbingest/connectors/schema_registry.h"

namespace hbingest::event_formats::avro {

// One deleter per avro-c handle type; every handle the format holds is one of these.
struct SchemaDeleter {
  void operator()(avro_obj_t* schema) const { avro_schema_decref(schema); }
};
struct ValueIfaceDeleter {
  void operator()(avro_value_iface_t* iface) const { avro_value_iface_decref(iface); }
};
struct ReaderDeleter {
  void operator()(avro_reader_t_* reader) const { avro_reader_free(reader); }
};
using SchemaPtr = std::unique_ptr<avro_obj_t, SchemaDeleter>;
using ValueIfacePtr = std::unique_ptr<avro_value_iface_t, ValueIfaceDeleter>;
using ReaderPtr = std::unique_ptr<avro_reader_t_, ReaderDeleter>;

// An avro_value_t owns a reference to what it points at (avro_value_decref), and is a struct, not
// a pointer: this holds one, moves it, and gives it back once.
class Value {
 public:
  Value() = default;
  explicit Value(avro_value_iface_t& iface);  // a new generic value of that class
  ~Value() { reset(); }
  Value(Value&& other) noexcept : value_(other.value_) { other.value_ = {}; }
  Value& operator=(Value&& other) noexcept;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  avro_value_t* get() { return &value_; }
  const avro_value_t* get() const { return &value_; }

 private:
  void reset();
  avro_value_t value_{};
};

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

// Members in the order they are made: the value goes first, the schema last.
struct Schema {
  SchemaPtr schema;
  ValueIfacePtr iface;
  std::deque<Node> nodes;  // a deque: nodes point at each other
  const Node* root = nullptr;
  // The one generic value messages of this schema are read into, reset by each read: the cache
  // that holds the schema belongs to one format, which is not thread-safe.
  mutable Value value;
};

// Parses a registered Avro schema. A top level that is not a record, a schema nested deeper than
// kMaxNesting, or text avro-c refuses: BadSchema, with avro-c's reason. The schema's references
// (named types registered under other subjects) are fetched through `registry` and defined where
// the schema first names them (may throw the registry's SchemaNotFound / SchemaRegistryUnavailable).
std::shared_ptr<const Schema> parse_schema(const connectors::RegisteredSchema& registered,
                                           connectors::SchemaRegistry& registry);

// avro-c's last error text (avro_strerror), without a trailing newline.
std::string last_error();

}  // namespace hbingest::event_formats::avro
