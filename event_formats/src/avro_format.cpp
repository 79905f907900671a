// decode.format: avro — the Confluent frame (magic 0, schema id) around one Avro binary value of
// the writer schema the id names. Decoded with that writer schema alone, no reader schema: avro-c's
// writer→reader resolution refuses a reader field the writer lacks even when it has a default,
// and the key spec and the cells read fields by name anyway. docs/formats.md, "Avro".
#include "avro_binary_check.h"
#include "avro_record.h"
#include "avro_schema.h"
#include "formats.h"
#include "hbingest/event_formats/confluent_frame.h"
#include "schema_cache.h"

namespace hbingest::event_formats {
namespace {

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
    if (const auto why = avro::check_binary(*schema->root, frame_.payload)) return invalid(*why);
    const auto* data = frame_.payload.data();
    const auto size = static_cast<std::int64_t>(frame_.payload.size());
    if (!reader_) {
      reader_.reset(avro_reader_memory(data, size));
      if (!reader_) return invalid("avro-c cannot make a reader: " + avro::last_error());
    } else {
      avro_reader_memory_set_source(reader_.get(), data, size);
    }
    // check_binary let through only what avro-c reads: a failure here is avro-c's (out of memory).
    if (avro_value_read(reader_.get(), schema->value.get()) != 0) return invalid(avro::last_error());
    record_.view(std::move(schema));
    return std::nullopt;
  }
  const Record& record() const override { return record_; }
  SchemaCacheStats schema_cache_stats() const override { return schemas_.stats(); }

 private:
  DecodeFailure invalid(const std::string& why) const {
    return DecodeFailure{DecodeFailure::Kind::invalid, "invalid_avro",
                         "schema id " + std::to_string(frame_.schema_id) + ": " + why, frame_.schema_id};
  }

  SchemaCache<avro::Schema> schemas_;
  ConfluentFrame frame_;
  avro::ReaderPtr reader_;   // reads each message's payload in place
  avro::AvroRecord record_;  // views the last message; goes before the schemas it holds
};

}  // namespace

std::unique_ptr<InputFormat> make_avro_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits) {
  return std::make_unique<AvroFormat>(registry, limits);
}

}  // namespace hbingest::event_formats
