#include "hbingest/connectors/dead_letter_producer.h"

#include <librdkafka/rdkafka.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "hbingest/connectors/kafka_error.h"

namespace hbingest::connectors {

std::vector<std::pair<std::string, std::string>> dead_letter_headers(const DeadLetter& letter) {
  return {
      {"__connect.errors.topic", letter.original.topic},
      {"__connect.errors.partition", std::to_string(letter.original.partition)},
      {"__connect.errors.offset", std::to_string(letter.original.offset)},
      {"__connect.errors.exception.class.name", letter.exception_class},
      {"__connect.errors.exception.message", letter.exception_message},
      {"__hbingest.errors.stage", letter.stage},
  };
}

namespace {

// The broker's (or the producer's) verdict on the record itself: sending the same bytes again is
// refused again. Everything else (broker down, unknown topic, authorization, timeouts) may pass later.
bool record_refused_for_good(int code) {
  switch (static_cast<rd_kafka_resp_err_t>(code)) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:     // over message.max.bytes (producer) or max.message.bytes (topic)
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:  // the batch is larger than a log segment
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:  // e.g. broker-side validation of the record's content
      return true;
    default:
      return false;
  }
}

DeadLetterOutcome outcome_of(int code) {
  return record_refused_for_good(code) ? DeadLetterOutcome::rejected : DeadLetterOutcome::failed;
}

}  // namespace

KafkaDeadLetterProducer::KafkaDeadLetterProducer(DeadLetterProducerOptions options)
    : topic_(std::move(options.topic)), producer_(std::move(options.producer)) {
  if (topic_.empty()) throw std::invalid_argument("dead-letter producer: topic is required");
}

KafkaDeadLetterProducer::~KafkaDeadLetterProducer() = default;

void KafkaDeadLetterProducer::send(std::shared_ptr<const DeadLetter> letter, Done done) {
  ProducerRecord record;
  record.topic = topic_;
  if (letter->original.key) record.key = *letter->original.key;
  record.payload = letter->original.payload;
  record.headers = dead_letter_headers(*letter);
  record.owner = letter;  // read in place: a letter is never copied, however often it is sent
  // Shared so that the callback can be recovered when produce() refuses the record (produce
  // drops the delivery callback it was given in that case).
  auto shared_done = std::make_shared<Done>(std::move(done));
  try {
    producer_.produce(record, [shared_done](const DeliveryReport& report) {
      if (!*shared_done) return;
      (*shared_done)(report.delivered ? DeadLetterOutcome::delivered : outcome_of(report.error_code), report.error);
    });
  } catch (const KafkaError& e) {
    if (e.fatal()) throw;
    spdlog::warn("dead-letter producer: letter for {}[{}]@{} refused: {}", letter->original.topic,
                 letter->original.partition, letter->original.offset, e.what());
    refused_.push_back({std::move(*shared_done), outcome_of(e.code()), e.what()});
  }
}

void KafkaDeadLetterProducer::report_refused() {
  auto refused = std::exchange(refused_, {});
  for (auto& [done, outcome, reason] : refused) {
    if (done) done(outcome, reason);
  }
}

void KafkaDeadLetterProducer::poll(std::chrono::milliseconds timeout) {
  report_refused();
  producer_.poll(timeout);
}

bool KafkaDeadLetterProducer::flush(std::chrono::milliseconds timeout) {
  report_refused();
  return producer_.flush(timeout);
}

}  // namespace hbingest::connectors
