// decode.format: avro — the Confluent frame (magic 0, schema id) around one Avro binary value of
// the writer schema the id names. Decoded with that writer schema alone, no reader schema: avro-c's
// writer→reader resolution refuses a reader field the writer lacks even when it has a default,
// and the key spec and the cells read fields by name anyway. docs/formats.md, "Avro".
//
// avro-c parses the schema; the message is read in place by check_binary and the record, not by
// avro-c's generic value: avro_value_read alone cost more CPU than the whole JSON path for the same
// event (a malloc and a wrapper per string, bytes and fixed, a hash-map insert per map key), and
// 1.11.1 trusts claimed lengths and counts (bench/README.md has the figures).
#include "avro_binary_check.h"
#include "avro_record.h"
#include "avro_schema.h"
#include "formats.h"
#include "hbingest/event_formats/confluent_frame.h"
#include "schema_cache.h"

namespace hbingest::event_formats {
namespace {

constexpr std::size_t kKeptMessageBytes = 64 * 1024;

class AvroFormat final : public InputFormat {
 public:
  AvroFormat(connectors::SchemaRegistry& registry, SchemaCacheLimits limits)
      : schemas_(registry, connectors::SchemaType::avro, limits, avro::parse_schema) {}

  std::optional<DecodeFailure> parse(std::string_view payload) override {
    record_.clear();
    if (auto failure = read_confluent_frame(payload, false, frame_)) return failure;
    auto cached = schemas_.get(frame_.schema_id);
    if (auto* failure = std::get_if<DecodeFailure>(&cached)) return std::move(*failure);
    auto& schema = std::get<std::shared_ptr<const avro::Schema>>(cached);
    // A copy the record views, as JsonEvent keeps its own: the caller's bytes may go after parse().
    // As JsonEvent does too, buffers a large message grew are given back at the next small one,
    // so that one large event does not leave its size held for every event after it.
    if (payload_.capacity() > kKeptMessageBytes && frame_.payload.size() <= kKeptMessageBytes) {
      std::string().swap(payload_);
      record_.release_buffers();
    }
    payload_.assign(frame_.payload);
    if (const auto why = avro::check_binary(*schema->root, payload_, fields_)) return invalid(*why);
    record_.view(std::move(schema), fields_);
    return std::nullopt;
  }
  const Record& record() const override { return record_; }
  SchemaCacheStats schema_cache_stats() const override { return schemas_.stats(); }

 private:
  DecodeFailure invalid(const std::string& why) const {
    return DecodeFailure::invalid("invalid_avro", "schema id " + std::to_string(frame_.schema_id) + ": " + why,
                                  frame_.schema_id);
  }

  SchemaCache<avro::Schema> schemas_;
  ConfluentFrame frame_;
  std::string payload_;                   // the last message's Avro bytes; capacity kept
  std::vector<avro::FieldBytes> fields_;  // the last message's top-level fields; capacity kept
  avro::AvroRecord record_;               // views the last message
};

}  // namespace

std::unique_ptr<InputFormat> make_avro_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits) {
  return std::make_unique<AvroFormat>(registry, limits);
}

}  // namespace hbingest::event_formats
