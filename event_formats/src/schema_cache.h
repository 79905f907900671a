#pragma once
// Parsed schemas by id, for the formats that read a schema id from each message (Avro, Protobuf,
// JSON Schema). An id's schema never changes, so each is fetched and parsed once and kept while it
// is used; the cache is bounded in count and in bytes (of schema text, a proxy for the parsed
// form), the least recently used going first. A schema that does not parse is kept too, as its
// failure: every message naming it is invalid, without asking the registry again.
//
// Registry failures are not cached per id: an unreachable registry is asked again later (the
// pipeline holds the partition and backs off meanwhile). But the pipeline thread waits for every
// fetch, up to schema_registry.timeout: after one that got no answer, uncached ids are answered
// "unavailable" without asking for as long as that fetch took, so that a registry timing out
// holds the thread at most half of the time, and one fetch at a time, however many held
// partitions and new messages name uncached ids (the loop must poll, commit and ping the
// watchdog). A registry that fails fast (refused, a quick 5xx) is asked again at once.
// Not thread-safe: one per format.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>

#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"

namespace hbingest::event_formats {

// Thrown by a ParseFunction for a schema it cannot use; the message says why.
class BadSchema : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename Parsed>
class SchemaCache {
 public:
  // Makes the parsed form of a registered schema; may ask the registry for references. Throws
  // BadSchema, or the registry's SchemaNotFound / SchemaRegistryUnavailable for a reference.
  using ParseFunction =
      std::function<std::shared_ptr<const Parsed>(const connectors::RegisteredSchema&, connectors::SchemaRegistry&)>;
  using Result = std::variant<std::shared_ptr<const Parsed>, DecodeFailure>;

  SchemaCache(connectors::SchemaRegistry& registry, connectors::SchemaType expected, SchemaCacheLimits limits,
              ParseFunction parse)
      : registry_(registry), expected_(expected), limits_(limits), parse_(std::move(parse)) {}

  Result get(std::int32_t id) {
    if (const auto it = index_.find(id); it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);  // most recently used first
      return it->second->result;
    }
    const auto asked = Clock::now();
    if (asked < quiet_until_) {
      return failure(DecodeFailure::Kind::unavailable, "schema_registry_unavailable",
                     "schema id " + std::to_string(id) + ": not asked: the registry's last answer failed (" +
                         last_unavailable_ + ")",
                     id);
    }
    Result result = fetch(id);
    if (std::holds_alternative<DecodeFailure>(result) &&
        std::get<DecodeFailure>(result).kind == DecodeFailure::Kind::unavailable) {
      const auto answered = Clock::now();
      if (answered - asked >= kSlowFailure) quiet_until_ = answered + (answered - asked);
      last_unavailable_ = std::get<DecodeFailure>(result).message;
      return result;
    }
    entries_.push_front({id, result, 0});
    entries_.front().bytes = text_bytes_;
    bytes_ += text_bytes_;
    index_[id] = entries_.begin();
    evict();
    return result;
  }

  SchemaCacheStats stats() const { return {fetches_, fetch_failures_, entries_.size(), bytes_}; }

 private:
  using Clock = std::chrono::steady_clock;
  // A failure that cost the thread less is not worth a pause (a refused connection, a quick 503).
  static constexpr std::chrono::milliseconds kSlowFailure{100};

  struct Entry {
    std::int32_t id;
    Result result;
    std::size_t bytes;
  };

  static DecodeFailure failure(DecodeFailure::Kind kind, std::string reason, std::string message, std::int32_t id) {
    return DecodeFailure{kind, std::move(reason), std::move(message), id};
  }

  // The registry as a schema's parse sees it: counts the text of the schema and of every reference
  // fetched for it (the cache's bytes), and refuses to go on past limits_.max_schema_bytes.
  class CountingRegistry final : public connectors::SchemaRegistry {
   public:
    CountingRegistry(connectors::SchemaRegistry& real, std::size_t max_bytes, std::size_t& bytes)
        : real_(real), max_bytes_(max_bytes), bytes_(bytes) {}
    connectors::RegisteredSchema schema_by_id(std::int32_t id) override { return count(real_.schema_by_id(id)); }
    connectors::RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) override {
      return count(real_.schema_by_subject_version(subject, version));
    }
    std::string describe() const override { return real_.describe(); }

    connectors::RegisteredSchema count(connectors::RegisteredSchema schema) {
      bytes_ += schema.text.size();
      if (bytes_ > max_bytes_) {
        throw BadSchema("it and its references are over " + std::to_string(max_bytes_) + " bytes of schema text");
      }
      return schema;
    }

   private:
    connectors::SchemaRegistry& real_;
    std::size_t max_bytes_;
    std::size_t& bytes_;
  };

  Result fetch(std::int32_t id) {
    Result result = fetch_and_parse(id);
    // A failure keeps no schema text: what it holds is its message.
    if (const auto* failed = std::get_if<DecodeFailure>(&result)) text_bytes_ = failed->message.size();
    return result;
  }

  Result fetch_and_parse(std::int32_t id) {
    text_bytes_ = 0;
    const std::string where = "schema id " + std::to_string(id);
    CountingRegistry counting(registry_, limits_.max_schema_bytes, text_bytes_);
    try {
      auto schema = registry_.schema_by_id(id);
      ++fetches_;
      schema = counting.count(std::move(schema));
      if (schema.type != expected_) {
        return failure(DecodeFailure::Kind::invalid, "wrong_schema_type",
                       where + " is a " + std::string(connectors::schema_type_name(schema.type)) +
                           " schema, the topic's format expects " +
                           std::string(connectors::schema_type_name(expected_)),
                       id);
      }
      return parse_(schema, counting);
    } catch (const connectors::SchemaNotFound& e) {
      ++fetches_;
      return failure(DecodeFailure::Kind::invalid, "unknown_schema", where + ": " + e.what(), id);
    } catch (const connectors::SchemaRegistryUnavailable& e) {
      ++fetch_failures_;
      return failure(DecodeFailure::Kind::unavailable, "schema_registry_unavailable", where + ": " + e.what(), id);
    } catch (const BadSchema& e) {
      return failure(DecodeFailure::Kind::invalid, "bad_schema", where + ": " + e.what(), id);
    } catch (const std::bad_alloc&) {
      throw;  // the process's state, not the schema's
    } catch (const std::exception& e) {
      // Whatever else a parser throws about a schema's text (a JSON library's type error) is about
      // that text: escaping from here it would stop the daemon at this message at every restart.
      return failure(DecodeFailure::Kind::invalid, "bad_schema", where + ": cannot be read: " + e.what(), id);
    }
  }

  void evict() {
    while (entries_.size() > 1 && (entries_.size() > limits_.max_schemas || bytes_ > limits_.max_bytes)) {
      bytes_ -= entries_.back().bytes;
      index_.erase(entries_.back().id);
      entries_.pop_back();
    }
  }

  connectors::SchemaRegistry& registry_;
  connectors::SchemaType expected_;
  SchemaCacheLimits limits_;
  ParseFunction parse_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::int32_t, typename std::list<Entry>::iterator> index_;
  std::size_t bytes_ = 0;
  std::size_t text_bytes_ = 0;  // of the schema fetch() last got, references included
  std::uint64_t fetches_ = 0;
  std::uint64_t fetch_failures_ = 0;
  Clock::time_point quiet_until_{};  // uncached ids are not asked for before it
  std::string last_unavailable_;     // why the last fetch got no answer
};

}  // namespace hbingest::event_formats
