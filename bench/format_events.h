#pragma once
// The generator's login and order events (connectors/event_generator.h) in the other input formats,
// for the benchmarks: each JSON event converted once, field by field, into the Confluent-framed Avro,
// Protobuf or JSON Schema value a producer would write for it, with fixed schemas that mirror the
// generator's JSON (`ts` a timestamp-millis / google.protobuf.Timestamp, `items` an array of records /
// a repeated message). Decoded, each gives the cells of its JSON twin (the benchmark checks that).
//
// Avro is written with avro-c's generic value and memory writer, Protobuf with a dynamic message of a
// pool built from the .proto text. Not thread-safe (avro-c's error text is a global).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/connectors/schema_registry.h"

namespace hbingest::bench {

enum class Format { json, json_schema, avro, protobuf };

std::string_view to_string(Format format);

// The schema ids the framed values carry: one per event kind (login, order) of a format.
struct SchemaIds {
  std::int32_t login = 0;
  std::int32_t order = 0;
};

class FormatEvents {
 public:
  // The schemas' texts; throws std::runtime_error when one does not parse (a bug here).
  FormatEvents();
  ~FormatEvents();
  FormatEvents(const FormatEvents&) = delete;
  FormatEvents& operator=(const FormatEvents&) = delete;

  // The ids used when none are given: Avro 1/2, Protobuf 3/4, JSON Schema 5/5.
  static SchemaIds default_ids(Format format);
  // The schemas of `format` as a registry serves them, with `ids` (none for json).
  std::vector<connectors::RegisteredSchema> schemas(Format format, SchemaIds ids) const;
  std::vector<connectors::RegisteredSchema> schemas(Format format) const {
    return schemas(format, default_ids(format));
  }

  // One generated event (its JSON payload; login or order by its event_id) as `format` writes it,
  // framed with the id of its kind. json gives the payload back. Throws std::runtime_error naming the
  // field when the event does not fit the schema.
  std::string convert(std::string_view json, Format format, SchemaIds ids) const;
  std::string convert(std::string_view json, Format format) const { return convert(json, format, default_ids(format)); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The schemas' texts, for whoever registers them elsewhere (bench/compare.sh).
std::string_view avro_schema_text(bool order);
std::string_view protobuf_schema_text(bool order);

}  // namespace hbingest::bench
