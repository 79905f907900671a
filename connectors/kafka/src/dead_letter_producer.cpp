#include "hbingest/connectors/dead_letter_producer.h"

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

KafkaDeadLetterProducer::KafkaDeadLetterProducer(DeadLetterProducerOptions options)
    : topic_(std::move(options.topic)), producer_(std::move(options.producer)) {
  if (topic_.empty()) throw std::invalid_argument("dead-letter producer: topic is required");
}

KafkaDeadLetterProducer::~KafkaDeadLetterProducer() = default;

void KafkaDeadLetterProducer::send(const DeadLetter& letter, Done done) {
  ProducerRecord record;
  record.topic = topic_;
  if (letter.original.key) record.key = *letter.original.key;
  record.payload = letter.original.payload;
  record.headers = dead_letter_headers(letter);
  // Shared so that the callback can be recovered when produce() refuses the record (produce
  // drops the delivery callback it was given in that case).
  auto shared_done = std::make_shared<Done>(std::move(done));
  try {
    producer_.produce(record, [shared_done](const DeliveryReport& report) {
      if (*shared_done) (*shared_done)(report.delivered, report.error);
    });
  } catch (const KafkaError& e) {
    if (e.fatal()) throw;
    spdlog::warn("dead-letter producer: letter for {}[{}]@{} refused: {}", letter.original.topic,
                 letter.original.partition, letter.original.offset, e.what());
    refused_.emplace_back(std::move(*shared_done), e.what());
  }
}

void KafkaDeadLetterProducer::report_refused() {
  auto refused = std::exchange(refused_, {});
  for (auto& [done, reason] : refused) {
    if (done) done(false, reason);
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
