// decode.format: protobuf — the Confluent frame (magic 0, schema id, message indexes) around one
// serialized Protobuf message of the type the indexes name in the registry's schema
// (protobuf_schema.h), read as a Record. docs/formats.md, "Protobuf".
//
// A message is read from its wire bytes in place (protobuf_wire.h, protobuf_wire_record.h) when
// the checking pass accepts it, which costs a fraction of libprotobuf's parse. Any other (invalid
// bytes, a type with required fields or extensions, the rare forms the check leaves alone) is
// decoded as a dynamic message and read through reflection (protobuf_record.h): libprotobuf
// decides what is valid and says why not, and both readings give the same record.
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
#include "protobuf_wire_record.h"
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
  ProtobufFormat(connectors::SchemaRegistry& registry, SchemaCacheLimits limits, ProtobufReading reading)
      : in_place_(reading == ProtobufReading::in_place),
        schemas_(registry, connectors::SchemaType::protobuf, limits,
                 [](const connectors::RegisteredSchema& schema, connectors::SchemaRegistry& r) {
                   return ProtobufSchema::parse(schema, r);
                 }) {}

  std::optional<DecodeFailure> parse(std::string_view payload) override {
    record_.reset(nullptr);
    wire_record_.clear();
    active_ = &wire_record_;
    // The last message goes; the arena keeps its first block and frees the rest.
    if (std::exchange(arena_used_, false)) arena_.Reset();
    if (std::exchange(large_, false)) {
      record_.release_buffers();
      wire_record_.release_buffers();
    }
    if (auto failure = read_confluent_frame(payload, true, frame_)) return failure;
    auto cached = schemas_.get(frame_.schema_id);
    if (auto* failure = std::get_if<DecodeFailure>(&cached)) return std::move(*failure);
    auto& schema = std::get<std::shared_ptr<const ProtobufSchema>>(cached);
    std::string why;
    const pb::Descriptor* type = schema->message_type(frame_.message_indexes, why);
    if (type == nullptr) return invalid("bad_message_index", std::move(why));

    // The schema is kept while a record views a message of it (its tables, or the arena's
    // message), even if the cache lets it go.
    current_ = std::move(schema);
    const auto& info = current_->message_info(type);
    large_ = frame_.payload.size() > kKeptPayloadBytes;
    // (A payload of 2 GiB or more is libprotobuf's to refuse, as it does.)
    if (in_place_ && info.wire != nullptr && frame_.payload.size() <= INT_MAX) {
      // The record views the bytes until the next message: a copy of them, as the caller's go.
      if (payload_.capacity() > kKeptPayloadBytes && !large_) std::string().swap(payload_);
      payload_.assign(frame_.payload);
      if (checker_.check(*info.wire, payload_, wire_record_.layout())) {
        wire_record_.reset(*info.wire, payload_);
        return std::nullopt;
      }
    }

    // Each message made afresh on the arena: clearing a reused dynamic message goes through
    // reflection field by field, and cost more than parsing it (bench/README.md, "Per format").
    arena_used_ = true;
    pb::Message& message = *info.prototype->New(&arena_);
    if (auto failure = decode(message, *type, info.may_lack_required)) return failure;
    record_.reset(&message);
    active_ = &record_;
    return std::nullopt;
  }

  const Record& record() const override { return *active_; }
  SchemaCacheStats schema_cache_stats() const override { return schemas_.stats(); }

 private:
  DecodeFailure invalid(std::string reason, std::string message) const {
    return DecodeFailure::invalid(std::move(reason), std::move(message), frame_.schema_id);
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
  const bool in_place_;
  SchemaCache<ProtobufSchema> schemas_;
  std::shared_ptr<const ProtobufSchema> current_;
  ProtobufRecord record_;
  pbwire::Checker checker_;
  std::string payload_;  // the last message's bytes, read in place; capacity kept
  ProtobufWireRecord wire_record_;
  const Record* active_ = &wire_record_;  // the record of the last message
  bool arena_used_ = false;               // the arena holds the last message
  ConfluentFrame frame_;
  bool large_ = false;  // the last payload was above kKeptPayloadBytes
  std::unique_ptr<char[]> arena_block_ = std::make_unique<char[]>(kArenaBlockBytes);
  pb::Arena arena_{arena_options(arena_block_.get())};
};

}  // namespace

std::unique_ptr<InputFormat> make_protobuf_format(connectors::SchemaRegistry& registry, SchemaCacheLimits limits,
                                                  ProtobufReading reading) {
  route_protobuf_logs();
  return std::make_unique<ProtobufFormat>(registry, limits, reading);
}

}  // namespace hbingest::event_formats
