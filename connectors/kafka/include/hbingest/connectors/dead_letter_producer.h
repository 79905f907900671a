#pragma once
// DeadLetterSink over a KafkaProducer: original bytes plus Kafka Connect-compatible error headers.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/connectors/source.h"

namespace hbingest::connectors {

// The headers a dead letter carries, in this order, values as UTF-8 text (as Kafka Connect's
// DeadLetterQueueReporter writes them): __connect.errors.topic, .partition, .offset,
// .exception.class.name, .exception.message, then __hbingest.errors.stage.
std::vector<std::pair<std::string, std::string>> dead_letter_headers(const DeadLetter& letter);

struct DeadLetterProducerOptions {
  std::string topic;  // the dead-letter topic
  // acks=all and enable.idempotence=true by default; message.max.bytes 10 MiB so that a 5 MB
  // original fits. The topic needs max.message.bytes >= that (or the broker message.max.bytes).
  KafkaProducerOptions producer;
};

// Contract: see DeadLetterSink. The key and payload are the original bytes (a missing key stays
// missing), read in place from the shared letter. `done` always runs from poll() or flush() on the
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
