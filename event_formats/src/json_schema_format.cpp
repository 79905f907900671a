// decode.format: json_schema — the Confluent frame (magic 0, schema id) around one JSON object.
// The schema is fetched so that an id the registry does not know is invalid (unknown_schema), as
// Confluent's deserializer would refuse it; the payload is not validated against it (the event's
// fields are read as JSON, exactly as decode.format: json reads them).
#include <nlohmann/json.hpp>

#include "formats.h"
#include "hbingest/event_formats/confluent_frame.h"
#include "hbingest/event_formats/json_event.h"
#include "schema_cache.h"

namespace hbingest::event_formats {
namespace {

struct JsonSchema {};

std::shared_ptr<const JsonSchema> parse_json_schema(const connectors::RegisteredSchema& schema,
                                                    connectors::SchemaRegistry&) {
  if (!nlohmann::json::accept(schema.text)) throw BadSchema("the registry's JSON Schema is not valid JSON");
  return std::make_shared<const JsonSchema>();
}

class JsonSchemaFormat final : public InputFormat {
 public:
  JsonSchemaFormat(connectors::SchemaRegistry& registry, SchemaCacheLimits limits)
      : schemas_(registry, connectors::SchemaType::json, limits, parse_json_schema) {}

  std::optional<DecodeFailure> parse(std::string_view payload) override {
    if (auto failure = read_confluent_frame(payload, false, frame_)) return failure;
    auto schema = schemas_.get(frame_.schema_id);
    if (auto* failure = std::get_if<DecodeFailure>(&schema)) return std::move(*failure);
    if (const auto failure = event_.parse(frame_.payload)) {
      const auto where = " (schema id " + std::to_string(frame_.schema_id) + ")";
      if (failure->not_an_object) {
        return DecodeFailure::invalid("not_an_object", "payload is JSON but not an object" + where, frame_.schema_id);
      }
      return DecodeFailure::invalid("invalid_json", "payload is " + failure->message + where, frame_.schema_id);
    }
    return std::nullopt;
  }
  const Record& record() const override { return event_; }
  SchemaCacheStats schema_cache_stats() const override { return schemas_.stats(); }

 private:
  SchemaCache<JsonSchema> schemas_;
  ConfluentFrame frame_;
  JsonEvent event_;
};

}  // namespace

std::unique_ptr<InputFormat> make_json_schema_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits) {
  return std::make_unique<JsonSchemaFormat>(registry, limits);
}

}  // namespace hbingest::event_formats
