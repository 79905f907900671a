#include "hbingest/connectors/dead_letter_producer.h"

#include <librdkafka/rdkafka.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <array>
#include <stdexcept>

#include "hbingest/connectors/kafka_error.h"

namespace hbingest::connectors {

namespace {

// Per header on top of its name and value: two length varints (at most 5 bytes each for the
// lengths a record can have) in librdkafka's count of message.max.bytes.
constexpr std::size_t kHeaderFramingBytes = 10;

std::size_t size_of(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::size_t bytes = 0;
  for (const auto& [name, value] : headers) bytes += name.size() + value.size() + kHeaderFramingBytes;
  return bytes;
}

// `text` cut to at most `max_bytes`, ending in "..." when cut, never inside a UTF-8 sequence.
std::string cut_text(const std::string& text, std::size_t max_bytes) {
  constexpr std::string_view kEllipsis = "...";
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes - kEllipsis.size();
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // a continuation byte
  return text.substr(0, end) + std::string(kEllipsis);
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("dead-letter producer: OpenSSL SHA-256 failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0x0F];
  }
  return hex;
}

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

std::vector<std::pair<std::string, std::string>> dead_letter_headers(const DeadLetter& letter) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"__connect.errors.topic", letter.original.topic},
      {"__connect.errors.partition", std::to_string(letter.original.partition)},
      {"__connect.errors.offset", std::to_string(letter.original.offset)},
      {"__connect.errors.exception.class.name", letter.exception_class},
      {"__connect.errors.exception.message", cut_text(letter.exception_message, kMaxExceptionMessageBytes)},
      {"__hbingest.errors.stage", letter.stage},
  };
  if (letter.schema_id) headers.emplace_back("__hbingest.errors.schema.id", std::to_string(*letter.schema_id));
  return headers;
}

DeadLetterRecord dead_letter_record(const DeadLetter& letter, std::size_t max_bytes) {
  // A tombstone's view has no data: produced as a null value again (ProducerRecord::payload).
  const std::string_view payload = letter.original.payload_bytes();
  DeadLetterRecord record;
  record.key = letter.original.key;
  record.headers = dead_letter_headers(letter);
  const auto key_bytes = [&] { return record.key ? record.key->size() : 0; };
  if (!letter.headers_only && key_bytes() + payload.size() + size_of(record.headers) <= max_bytes) {
    record.payload = payload;
    return record;
  }
  record.headers.emplace_back("__hbingest.truncated", "true");
  record.headers.emplace_back("__hbingest.original.size", std::to_string(payload.size()));
  record.headers.emplace_back("__hbingest.original.sha256", sha256_hex(payload));
  if (record.key && key_bytes() + size_of(record.headers) > max_bytes) {
    record.key.reset();
    record.headers.emplace_back("__hbingest.key.dropped", "true");
  }
  const std::size_t used = key_bytes() + size_of(record.headers);
  const std::size_t room = letter.headers_only || used >= max_bytes ? 0 : max_bytes - used;
  record.payload = payload.substr(0, room);
  return record;
}

KafkaDeadLetterProducer::KafkaDeadLetterProducer(DeadLetterProducerOptions options)
    : topic_(std::move(options.topic)),
      max_letter_bytes_(options.max_letter_bytes),
      producer_(std::move(options.producer)) {
  if (topic_.empty()) throw std::invalid_argument("dead-letter producer: topic is required");
  if (max_letter_bytes_ < kMinLetterBytes) {
    throw std::invalid_argument("dead-letter producer: max_letter_bytes " + std::to_string(max_letter_bytes_) +
                                " is below " + std::to_string(kMinLetterBytes));
  }
}

KafkaDeadLetterProducer::~KafkaDeadLetterProducer() = default;

void KafkaDeadLetterProducer::send(std::shared_ptr<const DeadLetter> letter, Done done) {
  DeadLetterRecord bounded = dead_letter_record(*letter, max_letter_bytes_);
  ProducerRecord record;
  record.topic = topic_;
  record.key = bounded.key;
  record.payload = bounded.payload;
  record.headers = std::move(bounded.headers);
  record.owner = letter;  // key and payload are read in place: a letter is never copied, however often it is sent
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
