#include "hbingest/connectors/dead_letter_producer.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <limits>
#include <map>
#include <stdexcept>

#include "mock_kafka_cluster.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

DeadLetter sample_letter() {
  DeadLetter letter;
  letter.original.topic = "events";
  letter.original.partition = 7;
  letter.original.offset = 123456789012;
  letter.original.key = "u000042";
  letter.original.payload = "{\"event_id\":";
  letter.stage = "decode";
  letter.exception_class = "hbingest.InvalidJson";
  letter.exception_message = "unexpected end of input at byte 12";
  return letter;
}

TEST(DeadLetterHeaders, KafkaConnectNamesAndTextValuesInOrder) {
  const auto headers = dead_letter_headers(sample_letter());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"__connect.errors.topic", "events"},
      {"__connect.errors.partition", "7"},
      {"__connect.errors.offset", "123456789012"},
      {"__connect.errors.exception.class.name", "hbingest.InvalidJson"},
      {"__connect.errors.exception.message", "unexpected end of input at byte 12"},
      {"__hbingest.errors.stage", "decode"},
  };
  EXPECT_EQ(headers, expected);
}

// 50 000 bytes that are not all alike, and their SHA-256 (Python's hashlib).
std::string patterned_payload() {
  std::string payload(50000, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 7) % 251);
  return payload;
}
constexpr std::string_view kPatternedSha256 = "e86adb39661e24e5697a957885e796851faa6043777824e9bd1bdc086d86f0b9";

// What librdkafka counts against message.max.bytes, with our 10 bytes of framing per header.
std::size_t record_bytes(const DeadLetterRecord& record) {
  std::size_t bytes = (record.key ? record.key->size() : 0) + record.payload.size();
  for (const auto& [name, value] : record.headers) bytes += name.size() + value.size() + 10;
  return bytes;
}

std::map<std::string, std::string> header_map(const std::vector<std::pair<std::string, std::string>>& headers) {
  return {headers.begin(), headers.end()};
}

TEST(DeadLetterRecord, LetterThatFitsGoesWholeAndInPlace) {
  const DeadLetter letter = sample_letter();
  const auto record = dead_letter_record(letter, kMinLetterBytes);
  EXPECT_EQ(record.payload.data(), letter.original.payload->data()) << "a view of the letter, not a copy";
  EXPECT_EQ(record.payload, letter.original.payload);
  ASSERT_TRUE(record.key);
  EXPECT_EQ(record.key->data(), letter.original.key->data());
  EXPECT_EQ(record.headers, dead_letter_headers(letter)) << "no truncation headers";
}

TEST(DeadLetterRecord, LongerPayloadIsCutToTheBoundWithItsSizeAndDigest) {
  DeadLetter letter = sample_letter();
  letter.original.payload = patterned_payload();
  const auto record = dead_letter_record(letter, 8192);
  EXPECT_LE(record_bytes(record), 8192u);
  EXPECT_GT(record_bytes(record), 8192u - 64) << "the payload keeps what fits";
  EXPECT_EQ(record.payload, letter.original.payload_bytes().substr(0, record.payload.size()));
  EXPECT_EQ(record.payload.data(), letter.original.payload->data());
  const auto headers = header_map(record.headers);
  EXPECT_EQ(headers.at("__hbingest.truncated"), "true");
  EXPECT_EQ(headers.at("__hbingest.original.size"), "50000");
  EXPECT_EQ(headers.at("__hbingest.original.sha256"), kPatternedSha256);
  EXPECT_EQ(headers.at("__connect.errors.offset"), "123456789012") << "the origin is still named";
  ASSERT_TRUE(record.key);
  EXPECT_EQ(*record.key, "u000042");
  EXPECT_FALSE(headers.contains("__hbingest.key.dropped"));
}

TEST(DeadLetterRecord, HeadersOnlyLetterCarriesNoPayload) {
  DeadLetter letter = sample_letter();
  letter.original.payload = patterned_payload();
  letter.headers_only = true;
  const auto record = dead_letter_record(letter, 900 * 1024);
  EXPECT_TRUE(record.payload.empty());
  const auto headers = header_map(record.headers);
  EXPECT_EQ(headers.at("__hbingest.truncated"), "true");
  EXPECT_EQ(headers.at("__hbingest.original.size"), "50000");
  EXPECT_EQ(headers.at("__hbingest.original.sha256"), kPatternedSha256);
  EXPECT_EQ(headers.at("__connect.errors.exception.class.name"), "hbingest.InvalidJson");
  ASSERT_TRUE(record.key) << "a key that fits is kept";
}

TEST(DeadLetterRecord, TombstoneStaysANullValueAndAnEmptyValueStaysEmpty) {
  DeadLetter letter = sample_letter();
  letter.original.payload.reset();
  const auto tombstone = dead_letter_record(letter, kMinLetterBytes);
  EXPECT_EQ(tombstone.payload.data(), nullptr) << "produced as a null value (ProducerRecord::payload)";
  letter.original.payload.emplace();
  const auto empty = dead_letter_record(letter, kMinLetterBytes);
  EXPECT_NE(empty.payload.data(), nullptr);
  EXPECT_TRUE(empty.payload.empty());
}

TEST(DeadLetterRecord, KeyThatDoesNotFitBesideTheHeadersIsDropped) {
  DeadLetter letter = sample_letter();
  letter.original.key = std::string(10000, 'k');
  const auto record = dead_letter_record(letter, kMinLetterBytes);
  EXPECT_FALSE(record.key);
  EXPECT_TRUE(record.payload.empty() || record_bytes(record) <= kMinLetterBytes);
  EXPECT_LE(record_bytes(record), kMinLetterBytes);
  const auto headers = header_map(record.headers);
  EXPECT_EQ(headers.at("__hbingest.key.dropped"), "true");
  EXPECT_EQ(headers.at("__hbingest.original.size"), std::to_string(letter.original.payload->size()));
}

TEST(DeadLetterRecord, LongReasonIsCutOnACharacterBoundary) {
  DeadLetter letter = sample_letter();
  letter.exception_message = "no route for event type '";
  for (int i = 0; i < 2000; ++i) letter.exception_message += "\xc3\xa9";  // é, two bytes
  const auto message =
      header_map(dead_letter_record(letter, kMinLetterBytes).headers).at("__connect.errors.exception.message");
  EXPECT_LE(message.size(), kMaxExceptionMessageBytes);
  ASSERT_TRUE(message.ends_with("..."));
  const std::string kept = message.substr(0, message.size() - 3);
  EXPECT_TRUE(letter.exception_message.starts_with(kept));
  EXPECT_EQ((kept.size() - 25) % 2, 0u) << "cut inside a character";
}

TEST(DeadLetterRecord, NeverExceedsTheBound) {
  // The widest header values a letter can have: a 249-byte topic name, offset and partition at
  // their maximum, a reason at its cap.
  for (const std::size_t bound : {kMinLetterBytes, std::size_t{5000}, std::size_t{10000}, std::size_t{900 * 1024}}) {
    for (const std::size_t payload : {std::size_t{0}, bound / 2, bound, 3 * bound}) {
      for (const std::size_t key : {std::size_t{0}, std::size_t{16}, bound / 2, 2 * bound}) {
        for (const bool headers_only : {false, true}) {
          DeadLetter letter = sample_letter();
          letter.original.topic = std::string(249, 't');
          letter.original.partition = std::numeric_limits<std::int32_t>::max();
          letter.original.offset = std::numeric_limits<std::int64_t>::max();
          letter.original.payload = std::string(payload, 'p');
          if (key > 0) letter.original.key = std::string(key, 'k');
          letter.exception_message.assign(5000, 'r');
          letter.headers_only = headers_only;
          const auto record = dead_letter_record(letter, bound);
          EXPECT_LE(record_bytes(record), bound) << bound << " " << payload << " " << key << " " << headers_only;
        }
      }
    }
  }
}

TEST(DeadLetterProducer, RequiresTopic) {
  DeadLetterProducerOptions options;
  options.producer.bootstrap_servers = "127.0.0.1:1";
  EXPECT_THROW(KafkaDeadLetterProducer{options}, std::invalid_argument);
}

TEST(DeadLetterProducer, RequiresABoundTheHeadersFitIn) {
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.producer.bootstrap_servers = "127.0.0.1:1";
  options.max_letter_bytes = kMinLetterBytes - 1;
  EXPECT_THROW(KafkaDeadLetterProducer{options}, std::invalid_argument);
}

TEST(DeadLetterProducer, OversizedLetterIsReportedFromPollNotFromSend) {
  // A producer whose message.max.bytes is below max_letter_bytes (the config refuses that; a
  // broker's limit behaves the same): the letter is rejected, not failed.
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.producer.bootstrap_servers = "127.0.0.1:1";
  options.producer.properties = {{"message.max.bytes", "1000"}};
  KafkaDeadLetterProducer producer(options);
  auto letter = std::make_shared<DeadLetter>(sample_letter());
  letter->original.payload = std::string(5000, 'x');
  int calls = 0;
  auto outcome = DeadLetterOutcome::delivered;
  std::string error;
  producer.send(letter, [&](DeadLetterOutcome result, const std::string& why) {
    ++calls;
    outcome = result;
    error = why;
  });
  EXPECT_EQ(calls, 0) << "done must not run inside send()";
  EXPECT_EQ(producer.in_flight(), 1u);
  producer.poll(0ms);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(outcome, DeadLetterOutcome::rejected) << "the same record would be refused again";
  EXPECT_NE(error.find("dlq"), std::string::npos) << error;
  EXPECT_NE(error.find("MSG_SIZE_TOO_LARGE"), std::string::npos) << error;
  EXPECT_EQ(producer.in_flight(), 0u);
}

TEST(DeadLetterProducer, UnreachableBrokerNeverReportsDelivered) {
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.producer.bootstrap_servers = "127.0.0.1:1";
  options.producer.properties = {{"message.timeout.ms", "300"}};
  KafkaDeadLetterProducer producer(options);
  int calls = 0;
  auto outcome = DeadLetterOutcome::delivered;
  producer.send(std::make_shared<DeadLetter>(sample_letter()), [&](DeadLetterOutcome result, const std::string&) {
    ++calls;
    outcome = result;
  });
  EXPECT_EQ(calls, 0);
  // message.timeout.ms expires the letter; flush serves the failed delivery report.
  EXPECT_TRUE(producer.flush(30s));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(outcome, DeadLetterOutcome::failed) << "a timeout may pass later";
}

// The tests below run the producer against librdkafka's in-process mock cluster.
TEST(DeadLetterProducer, LongLetterArrivesCutWithItsSizeAndDigest) {
  testing::MockKafkaCluster cluster;
  cluster.create_topic("dlq", 1);
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.max_letter_bytes = 8192;
  options.producer.bootstrap_servers = cluster.bootstrap_servers();
  KafkaDeadLetterProducer producer(options);
  auto letter = std::make_shared<DeadLetter>(sample_letter());
  letter->original.payload = patterned_payload();
  const std::string original = *letter->original.payload;
  auto outcome = DeadLetterOutcome::failed;
  // The producer's reference is the only one left: librdkafka reads the letter in place, so it
  // must be kept alive until the delivery report (ASan sees it otherwise).
  producer.send(std::move(letter), [&](DeadLetterOutcome result, const std::string&) { outcome = result; });
  ASSERT_TRUE(producer.flush(30s));
  EXPECT_EQ(outcome, DeadLetterOutcome::delivered);

  const auto records = cluster.read("dlq", 0, 1);
  ASSERT_EQ(records.size(), 1u);
  const auto& record = records[0];
  EXPECT_GT(record.value.size(), 6000u);
  EXPECT_LT(record.value.size(), 8192u);
  EXPECT_EQ(record.value, original.substr(0, record.value.size()));
  EXPECT_EQ(record.key, "u000042");
  EXPECT_EQ(record.headers.at("__hbingest.truncated"), "true");
  EXPECT_EQ(record.headers.at("__hbingest.original.size"), "50000");
  EXPECT_EQ(record.headers.at("__hbingest.original.sha256"), kPatternedSha256);
  EXPECT_EQ(record.headers.at("__connect.errors.topic"), "events");
  EXPECT_EQ(record.headers.at("__connect.errors.partition"), "7");
  EXPECT_EQ(record.headers.at("__connect.errors.offset"), "123456789012");
}

TEST(DeadLetterProducer, BrokerRefusingTheRecordIsRejectedOtherErrorsFailed) {
  testing::MockKafkaCluster cluster;
  cluster.create_topic("dlq", 1);
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.producer.bootstrap_servers = cluster.bootstrap_servers();
  KafkaDeadLetterProducer producer(options);
  const auto send_once = [&](rd_kafka_resp_err_t broker_error) {
    // ApiKey 0 is Produce: the broker answers the next one with `broker_error`.
    rd_kafka_mock_push_request_errors(cluster.get(), 0, 1, broker_error);
    auto outcome = DeadLetterOutcome::delivered;
    std::string error;
    producer.send(std::make_shared<DeadLetter>(sample_letter()), [&](DeadLetterOutcome result, const std::string& e) {
      outcome = result;
      error = e;
    });
    EXPECT_TRUE(producer.flush(30s));
    return std::make_pair(outcome, error);
  };
  const auto [too_large, too_large_error] = send_once(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
  EXPECT_EQ(too_large, DeadLetterOutcome::rejected) << too_large_error;
  const auto [invalid, invalid_error] = send_once(RD_KAFKA_RESP_ERR_INVALID_RECORD);
  EXPECT_EQ(invalid, DeadLetterOutcome::rejected) << invalid_error;
  // The producer still delivers after a rejection.
  auto outcome = DeadLetterOutcome::failed;
  producer.send(std::make_shared<DeadLetter>(sample_letter()),
                [&](DeadLetterOutcome result, const std::string&) { outcome = result; });
  EXPECT_TRUE(producer.flush(30s));
  EXPECT_EQ(outcome, DeadLetterOutcome::delivered);
  // Last: librdkafka then holds the topic as unauthorized until its next metadata refresh.
  const auto [denied, denied_error] = send_once(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  EXPECT_EQ(denied, DeadLetterOutcome::failed) << denied_error << ": an ACL can be granted";
}

}  // namespace
}  // namespace hbingest::connectors
