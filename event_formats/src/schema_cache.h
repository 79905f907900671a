#pragma once
// Parsed schemas by id, for the formats that read a schema id from each message (Avro, Protobuf,
// JSON Schema). An id's schema never changes, so each is fetched and parsed once and kept while it
// is used; the cache is bounded in count and in bytes (of schema text with its references', a
// proxy for the parsed form), the least recently used going first. A schema that does not parse is kept too, as its
// failure: every message naming it is invalid, without asking the registry again.
//
// Registry failures are not cached: an unreachable registry is asked again at the next message
// (the pipeline holds the partition and backs off meanwhile).
//
// The registry is asked on a thread of the cache's own, and get() waits for the answer only a
// moment (kAnswerWait): a registry that is slow or black-holed (a whole timeout per request, one
// request per reference) must not stop the pipeline thread, which serves every other partition,
// the commits and the systemd watchdog. An answer that comes later is taken by the next get() of
// the id (the pipeline's retry of the held partition). One id is asked at a time.
// get() and stats() are not thread-safe: one cache per format, used by one thread.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
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

  // How long get() waits for the registry before it says "unavailable for now".
  static constexpr std::chrono::milliseconds kAnswerWait{200};

  SchemaCache(connectors::SchemaRegistry& registry, connectors::SchemaType expected, SchemaCacheLimits limits,
              ParseFunction parse)
      : registry_(registry), expected_(expected), limits_(limits), parse_(std::move(parse)) {}
  // Waits for a request in progress (at most the registry client's timeout per request).
  ~SchemaCache() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
  }
  SchemaCache(const SchemaCache&) = delete;
  SchemaCache& operator=(const SchemaCache&) = delete;

  Result get(std::int32_t id) {
    if (const auto it = index_.find(id); it != index_.end()) {
      entries_.splice(entries_.begin(), entries_, it->second);  // most recently used first
      return it->second->result;
    }
    std::unique_lock lock(mutex_);
    if (answer_ && answer_->id != id) {
      // An answer for another id, asked before and not asked again since (its partition went):
      // kept, and the registry thread is free for this one.
      Answer other = *std::exchange(answer_, std::nullopt);
      lock.unlock();
      take(std::move(other));
      lock.lock();
    }
    if (!asked_ && !answer_) {
      asked_ = id;
      if (!thread_.joinable()) thread_ = std::jthread([this] { serve(); });
      changed_.notify_all();
    }
    // Waits for the registry only a moment in all, but for the parse of what it answered as long as
    // that takes: parsing is this process's own work, as bounded as a message's decoding.
    const auto give_up = std::chrono::steady_clock::now() + kAnswerWait;
    while (!(answer_ && answer_->id == id) && asked_ == id) {
      if (parsing_) {
        changed_.wait(lock);
      } else if (changed_.wait_until(lock, give_up) == std::cv_status::timeout && !parsing_) {
        break;
      }
    }
    std::optional<Answer> answer;
    if (answer_ && answer_->id == id) answer = std::exchange(answer_, std::nullopt);
    const bool still_asking = asked_ == id;
    lock.unlock();
    if (answer) {
      take(*answer);
      if (const auto it = index_.find(id); it != index_.end()) return it->second->result;
      return answer->result;  // the registry could not answer: not kept
    }
    return failure(DecodeFailure::Kind::unavailable, "schema_registry_unavailable",
                   "schema id " + std::to_string(id) + ": " + registry_.describe() +
                       (still_asking ? " has not answered yet (still asking)" : " is busy with another schema"),
                   id);
  }

  SchemaCacheStats stats() const { return {fetches_, fetch_failures_, entries_.size(), bytes_}; }

 private:
  struct Entry {
    std::int32_t id;
    Result result;
    std::size_t bytes;
  };
  // What the registry thread made of one id.
  struct Answer {
    std::int32_t id = 0;
    Result result;
    std::size_t text_bytes = 0;
    bool answered = false;  // the registry answered (a schema or a 404), else it could not
  };

  static DecodeFailure failure(DecodeFailure::Kind kind, std::string reason, std::string message, std::int32_t id) {
    return DecodeFailure{kind, std::move(reason), std::move(message), id};
  }

  // On the pipeline thread: counts the answer and keeps it unless the registry could not answer.
  void take(Answer answer) {
    if (answer.answered) {
      ++fetches_;
    } else {
      ++fetch_failures_;
    }
    const auto* failed = std::get_if<DecodeFailure>(&answer.result);
    if ((failed != nullptr && failed->kind == DecodeFailure::Kind::unavailable) || index_.contains(answer.id)) return;
    entries_.push_front({answer.id, answer.result, answer.text_bytes});
    bytes_ += answer.text_bytes;
    index_[answer.id] = entries_.begin();
    evict();
  }

  // The registry thread: one id at a time, until the cache goes.
  void serve() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || (asked_ && !answer_); });
      if (stopping_) return;
      const std::int32_t id = *asked_;
      lock.unlock();
      Answer answer = fetch(id);
      lock.lock();
      answer_ = std::move(answer);
      asked_.reset();
      parsing_ = false;
      changed_.notify_all();
    }
  }

  // The registry as a schema's parse sees it: counts the text of the schema and of every reference
  // fetched for it (the cache's bytes), and refuses to go on past limits_.max_schema_bytes.
  // It also tells get() when the registry thread is parsing rather than waiting for the registry.
  class CountingRegistry final : public connectors::SchemaRegistry {
   public:
    CountingRegistry(connectors::SchemaRegistry& real, std::size_t max_bytes, std::size_t& bytes, SchemaCache& cache)
        : real_(real), max_bytes_(max_bytes), bytes_(bytes), cache_(cache) {}
    connectors::RegisteredSchema schema_by_id(std::int32_t id) override {
      cache_.set_parsing(false);
      auto schema = real_.schema_by_id(id);
      cache_.set_parsing(true);
      return count(std::move(schema));
    }
    connectors::RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) override {
      cache_.set_parsing(false);
      auto schema = real_.schema_by_subject_version(subject, version);
      cache_.set_parsing(true);
      return count(std::move(schema));
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
    SchemaCache& cache_;
  };

  // On the registry thread: between the registry's answers, the thread is parsing.
  void set_parsing(bool parsing) {
    {
      const std::lock_guard lock(mutex_);
      parsing_ = parsing;
    }
    changed_.notify_all();
  }

  // On the registry thread.
  Answer fetch(std::int32_t id) {
    Answer answer;
    answer.id = id;
    const std::string where = "schema id " + std::to_string(id);
    CountingRegistry counting(registry_, limits_.max_schema_bytes, answer.text_bytes, *this);
    try {
      auto schema = counting.schema_by_id(id);
      answer.answered = true;
      if (schema.type != expected_) {
        answer.result =
            failure(DecodeFailure::Kind::invalid, "wrong_schema_type",
                    where + " is a " + std::string(connectors::schema_type_name(schema.type)) +
                        " schema, the topic's format expects " + std::string(connectors::schema_type_name(expected_)),
                    id);
      } else {
        answer.result = parse_(schema, counting);
      }
    } catch (const connectors::SchemaNotFound& e) {
      answer.answered = true;
      answer.result = failure(DecodeFailure::Kind::invalid, "unknown_schema", where + ": " + e.what(), id);
    } catch (const connectors::SchemaRegistryUnavailable& e) {
      answer.answered = false;
      answer.result =
          failure(DecodeFailure::Kind::unavailable, "schema_registry_unavailable", where + ": " + e.what(), id);
    } catch (const BadSchema& e) {
      answer.result = failure(DecodeFailure::Kind::invalid, "bad_schema", where + ": " + e.what(), id);
    } catch (const std::bad_alloc&) {
      // The process's state, not the schema's: not kept, tried again later.
      answer.answered = false;
      answer.result = failure(DecodeFailure::Kind::unavailable, "schema_registry_unavailable",
                              where + ": out of memory while parsing it", id);
    } catch (const std::exception& e) {
      // Whatever else a parser throws about a schema's text (a JSON library's type error) is about
      // that text: escaping from here it would stop the daemon at this message at every restart.
      answer.result = failure(DecodeFailure::Kind::invalid, "bad_schema", where + ": cannot be read: " + e.what(), id);
    }
    // A failure keeps no schema text: what it holds is its message.
    if (const auto* failed = std::get_if<DecodeFailure>(&answer.result)) answer.text_bytes = failed->message.size();
    return answer;
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
  std::uint64_t fetches_ = 0;
  std::uint64_t fetch_failures_ = 0;

  // Shared with the registry thread.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::int32_t> asked_;  // the id the registry thread is asking for, or is to ask for
  std::optional<Answer> answer_;       // its answer, until get() takes it
  bool stopping_ = false;
  bool parsing_ = false;  // the registry thread is parsing what the registry answered
  std::jthread thread_;   // last: joined first, while the state it uses is still there
};

}  // namespace hbingest::event_formats
