#pragma once
// An input format: a Kafka message's value bytes → a Record. One implementation per format (JSON,
// Avro, Protobuf, JSON Schema), made by name in format_factory.cpp; EventDecoder does the rest
// (type, time, TTL, cells) once for all of them. The shape of Kafka Connect's Converter and
// ClickHouse's FormatFactory. docs/formats.md.
//
// Not thread-safe: one InputFormat per thread (each reuses its buffers between messages).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hbingest/event_formats/record.h"

namespace hbingest::event_formats {

// Why a message gave no record (or, from EventDecoder, no event).
struct DecodeFailure {
  enum class Kind {
    invalid,      // the bytes are not an event of this format: the dead-letter topic
    unavailable,  // the schema registry cannot answer now: hold the partition and try again later
  };
  Kind kind = Kind::invalid;
  // Short class for metrics and the dead-letter header: invalid_json, not_an_object,
  // not_confluent_framed, unknown_schema, bad_schema, invalid_avro, invalid_protobuf,
  // schema_registry_unavailable, missing_type, bad_time, ...
  std::string reason;
  std::string message;  // for people: says what was found and where (schema id, field path, byte offset)
  std::optional<std::int32_t> schema_id;  // the frame's schema id, once it was read

  static DecodeFailure invalid(std::string reason, std::string message,
                               std::optional<std::int32_t> schema_id = std::nullopt) {
    return DecodeFailure{Kind::invalid, std::move(reason), std::move(message), schema_id};
  }
};

// The bound of a format's schema cache (schema_registry.cache_max_schemas, .cache_max_bytes).
struct SchemaCacheLimits {
  std::size_t max_schemas = 1000;
  std::size_t max_bytes = 64 * 1024 * 1024;
  // One schema's text with all its references, whatever the cache's bound: past it the schema is
  // bad_schema (a registry answering hundreds of references of megabytes each).
  std::size_t max_schema_bytes = 64 * 1024 * 1024;
};

// What a format's schema cache did so far (all zero for JSON): the daemon's metrics read it.
struct SchemaCacheStats {
  std::uint64_t fetches = 0;         // answers the registry gave (schemas and 404s)
  std::uint64_t fetch_failures = 0;  // no answer (unreachable, timeout, 5xx)
  std::uint64_t cached_schemas = 0;
  std::uint64_t cached_bytes = 0;
};

class InputFormat {
 public:
  virtual ~InputFormat() = default;
  // Parses one message value. On success record() views it until the next parse().
  virtual std::optional<DecodeFailure> parse(std::string_view payload) = 0;
  virtual const Record& record() const = 0;
  virtual SchemaCacheStats schema_cache_stats() const { return {}; }
};

}  // namespace hbingest::event_formats
