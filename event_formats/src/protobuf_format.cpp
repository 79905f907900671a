// decode.format: protobuf — the Confluent frame (magic 0, schema id, message indexes) around one
// serialized Protobuf message, decoded as a dynamic message of the type the indexes name in the
// registry's schema (protobuf_schema.h) and read as a Record (protobuf_record.h). docs/formats.md,
// "Protobuf".
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <memory>
#include <utility>

#include "formats.h"
#include "hbingest/event_formats/confluent_frame.h"
#include "protobuf_log.h"
#include "protobuf_record.h"
#include "protobuf_schema.h"
#include "schema_cache.h"

namespace hbingest::event_formats {
namespace {

namespace pb = google::protobuf;

// After a payload above this size the record's text buffers are made afresh, so one large event
// does not leave its memory held by the decoder for every event after it (the message's own memory
// goes back with the arena's reset).
constexpr std::size_t kKeptPayloadBytes = 64 * 1024;
// The arena block kept between messages: room for the message of a usual event, its strings and
// nested messages, so that parsing one allocates nothing.
constexpr std::size_t kArenaBlockBytes = 16 * 1024;

pb::ArenaOptions arena_options(char* block) {
  pb::ArenaOptions options;
  options.initial_block = block;
  options.initial_block_size = kArenaBlockBytes;
  return options;
}

class ProtobufFormat final : public InputFormat {
 public:
  ProtobufFormat(connectors::SchemaRegistry& registry, SchemaCacheLimits limits)
      : schemas_(registry, connectors::SchemaType::protobuf, limits,
                 [](const connectors::RegisteredSchema& schema, connectors::SchemaRegistry& r) {
                   return ProtobufSchema::parse(schema, r);
                 }) {}

  std::optional<DecodeFailure> parse(std::string_view payload) override {
    record_.reset(nullptr);
    // The last message goes; the arena keeps its first block and frees the rest.
    arena_.Reset();
    if (std::exchange(large_, false)) record_.release_buffers();
    if (auto failure = read_confluent_frame(payload, true, frame_)) return failure;
    auto cached = schemas_.get(frame_.schema_id);
    if (auto* failure = std::get_if<DecodeFailure>(&cached)) return std::move(*failure);
    auto& schema = std::get<std::shared_ptr<const ProtobufSchema>>(cached);
    std::string why;
    const pb::Descriptor* type = schema->message_type(frame_.message_indexes, why);
    if (type == nullptr) return invalid("bad_message_index", std::move(why));

    // Each message made afresh on the arena: clearing a reused dynamic message goes through
    // reflection field by field, and cost more than parsing it (bench/README.md, "Per format").
    // The schema is kept while the arena holds a message of it (and the record views it), even if
    // the cache lets it go.
    current_ = std::move(schema);
    const auto& info = current_->message_info(type);
    pb::Message& message = *info.prototype->New(&arena_);
    large_ = frame_.payload.size() > kKeptPayloadBytes;
    if (auto failure = decode(message, *type, info.may_lack_required)) return failure;
    record_.reset(&message);
    return std::nullopt;
  }

  const Record& record() const override { return record_; }
  SchemaCacheStats schema_cache_stats() const override { return schemas_.stats(); }

 private:
  DecodeFailure invalid(std::string reason, std::string message) const {
    return DecodeFailure{DecodeFailure::Kind::invalid, std::move(reason), std::move(message), frame_.schema_id};
  }

  std::optional<DecodeFailure> decode(pb::Message& message, const pb::Descriptor& type, bool may_lack_required) {
    const std::string_view bytes = frame_.payload;
    const auto where = [&] {
      return type.full_name() + " (schema id " + std::to_string(frame_.schema_id) + ", " +
             std::to_string(bytes.size()) + " bytes)";
    };
    if (bytes.size() > INT_MAX) return invalid("invalid_protobuf", "payload too large for " + where());
    // What protobuf logs while parsing (a string that is not UTF-8) is about these bytes: it goes
    // into the failure's message.
    ProtobufLogCapture said;
    // ParsePartialFromArray, not a CodedInputStream of our own: it alone insists that the message
    // ends exactly at the last byte (a 0 tag or an end-group tag before it is invalid, not the end).
    // It nests at most CodedInputStream's default recursion limit deep, which libprotobuf offers no
    // way to change.
    if (!message.ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      std::string text = "payload is not a valid " + where() + ": truncated, malformed, nested more than " +
                         std::to_string(pb::io::CodedInputStream::GetDefaultRecursionLimit()) +
                         " deep, or a string that is not UTF-8";
      if (!said.text().empty()) text += " (protobuf: " + said.text() + ")";
      return invalid("invalid_protobuf", std::move(text));
    }
    if (may_lack_required && !message.IsInitialized()) {
      return invalid("invalid_protobuf",
                     "payload of " + where() + " lacks required fields: " + message.InitializationErrorString());
    }
    return std::nullopt;
  }

  // Member order: the record views a message of current_'s type on the arena, so both are declared
  // after current_ (and go first); the arena before its block.
  SchemaCache<ProtobufSchema> schemas_;
  std::shared_ptr<const ProtobufSchema> current_;
  ProtobufRecord record_;
  ConfluentFrame frame_;
  bool large_ = false;  // the last payload was above kKeptPayloadBytes
  std::unique_ptr<char[]> arena_block_ = std::make_unique<char[]>(kArenaBlockBytes);
  pb::Arena arena_{arena_options(arena_block_.get())};
};

}  // namespace

std::unique_ptr<InputFormat> make_protobuf_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits) {
  route_protobuf_logs();
  return std::make_unique<ProtobufFormat>(registry, limits);
}

}  // namespace hbingest::event_formats
