#include "hbingest/connectors/dead_letter_producer.h"

#include <gtest/gtest.h>

#include <stdexcept>

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

TEST(DeadLetterProducer, RequiresTopic) {
  DeadLetterProducerOptions options;
  options.producer.bootstrap_servers = "127.0.0.1:1";
  EXPECT_THROW(KafkaDeadLetterProducer{options}, std::invalid_argument);
}

TEST(DeadLetterProducer, OversizedLetterIsReportedFromPollNotFromSend) {
  DeadLetterProducerOptions options;
  options.topic = "dlq";
  options.producer.bootstrap_servers = "127.0.0.1:1";
  options.producer.properties = {{"message.max.bytes", "1000"}};
  KafkaDeadLetterProducer producer(options);
  auto letter = std::make_shared<DeadLetter>(sample_letter());
  letter->original.payload.assign(5000, 'x');
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

}  // namespace
}  // namespace hbingest::connectors
