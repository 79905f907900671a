#pragma once
// DeadLetterSink over a KafkaProducer: original bytes plus Kafka Connect-compatible error headers.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/connectors/source.h"

namespace hbingest::connectors {

// The headers a dead letter carries, in this order, values as UTF-8 text (as Kafka Connect's
// DeadLetterQueueReporter writes them): __connect.errors.topic, .partition, .offset,
// .exception.class.name, .exception.message (cut to kMaxExceptionMessageBytes on a character
// boundary, ending in "..."), then __hbingest.errors.stage.
std::vector<std::pair<std::string, std::string>> dead_letter_headers(const DeadLetter& letter);

// Longest __connect.errors.exception.message: the reason may quote the event (its type, say).
inline constexpr std::size_t kMaxExceptionMessageBytes = 1024;
// The smallest letter bound: the headers of a truncated letter always fit (about 2 KiB at most).
inline constexpr std::size_t kMinLetterBytes = 4096;

// What goes to Kafka for one letter. Key and payload are views into the letter, never copies.
struct DeadLetterRecord {
  std::optional<std::string_view> key;
  std::string_view payload;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The record of `letter` within `max_bytes`, counted the way librdkafka checks message.max.bytes:
// key + payload + headers (name, value and 10 bytes of framing each, more than their varints).
// A letter that fits goes whole: its original key and payload with dead_letter_headers(). One that
// does not, and every headers_only letter, keeps the first bytes of its payload that fit (none when
// headers_only) and gains __hbingest.truncated=true, __hbingest.original.size (the original
// payload's length) and __hbingest.original.sha256 (lower-case hex of the original payload), so
// the original can be found and checked in its topic. A key that does not fit beside the headers
// is dropped too (__hbingest.key.dropped=true). With max_bytes >= kMinLetterBytes the record never
// exceeds max_bytes.
DeadLetterRecord dead_letter_record(const DeadLetter& letter, std::size_t max_bytes);

struct DeadLetterProducerOptions {
  std::string topic;  // the dead-letter topic
  // The largest record sent (see dead_letter_record); at least kMinLetterBytes and at most the
  // producer's message.max.bytes. The default passes a broker's default message.max.bytes
  // (1 MB); a letter the topic still refuses is sent again with its headers only (see DeadLetter).
  std::size_t max_letter_bytes = 900 * 1024;
  // acks=all and enable.idempotence=true by default; message.max.bytes 10 MiB.
  KafkaProducerOptions producer;
};

// Contract: see DeadLetterSink. Each letter goes as dead_letter_record(letter, max_letter_bytes):
// the original key and bytes (a missing key stays missing) when they fit, read in place from the
// shared letter. Throws std::invalid_argument for an empty topic or max_letter_bytes below
// kMinLetterBytes. `done` always runs from poll() or flush() on the
// caller's thread, never from send(): delivered only once the broker acknowledged with acks=all;
// rejected when the producer or the broker refused the record itself (MSG_SIZE_TOO_LARGE,
// RECORD_LIST_TOO_LARGE, INVALID_MSG_SIZE, INVALID_RECORD); failed for anything that may pass
// later. A letter that cannot even be queued (larger than message.max.bytes, queue full past the
// producer's queue_full_timeout) is reported from the next poll()/flush(). A fatal producer error
// is thrown from poll()/flush(). Thread-compatible; neither copyable nor movable.
class KafkaDeadLetterProducer final : public DeadLetterSink {
 public:
  explicit KafkaDeadLetterProducer(DeadLetterProducerOptions options);
  ~KafkaDeadLetterProducer() override;  // does not flush; see KafkaProducer
  KafkaDeadLetterProducer(const KafkaDeadLetterProducer&) = delete;
  KafkaDeadLetterProducer& operator=(const KafkaDeadLetterProducer&) = delete;
  KafkaDeadLetterProducer(KafkaDeadLetterProducer&&) = delete;
  KafkaDeadLetterProducer& operator=(KafkaDeadLetterProducer&&) = delete;

  void send(std::shared_ptr<const DeadLetter> letter, Done done) override;
  void poll(std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;

  const std::string& topic() const noexcept { return topic_; }
  // Letters sent whose `done` has not run yet.
  std::size_t in_flight() const noexcept { return producer_.in_flight() + refused_.size(); }

 private:
  void report_refused();

  std::string topic_;
  std::size_t max_letter_bytes_;
  KafkaProducer producer_;
  // Letters librdkafka refused synchronously, reported on the next poll()/flush().
  struct Refused {
    Done done;
    DeadLetterOutcome outcome;
    std::string reason;
  };
  std::vector<Refused> refused_;
};

}  // namespace hbingest::connectors
