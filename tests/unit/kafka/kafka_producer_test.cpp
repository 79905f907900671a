#include "hbingest/connectors/kafka_producer.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "hbingest/connectors/kafka_error.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

KafkaProducerOptions unreachable_producer() {
  KafkaProducerOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  return options;
}

TEST(KafkaProducerConfig, BogusPropertyIsRejectedNamingTheKey) {
  auto options = unreachable_producer();
  options.properties = {{"bogus.property.name", "x"}};
  try {
    KafkaProducer producer(options);
    ADD_FAILURE() << "accepted a bogus property";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bogus.property.name"), std::string::npos) << e.what();
  }
}

TEST(KafkaProducerConfig, BadValueIsRejectedNamingTheKey) {
  auto options = unreachable_producer();
  options.properties = {{"acks", "most"}};
  try {
    KafkaProducer producer(options);
    ADD_FAILURE() << "accepted acks=most";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("acks"), std::string::npos) << e.what();
  }
}

TEST(KafkaProducerConfig, RequiresBootstrapServers) {
  EXPECT_THROW(KafkaProducer{KafkaProducerOptions{}}, std::invalid_argument);
}

TEST(KafkaProducer, TooLargeRecordThrowsNamingTopicAndDropsCallback) {
  auto options = unreachable_producer();
  options.properties = {{"message.max.bytes", "1000"}};
  KafkaProducer producer(options);
  const std::string payload(5000, 'x');
  bool called = false;
  try {
    producer.produce({.topic = "big-topic",
                      .key = std::nullopt,
                      .payload = payload,
                      .headers = {},
                      .partition = -1,
                      .owner = nullptr},
                     [&](const DeliveryReport&) { called = true; });
    ADD_FAILURE() << "queued a record larger than message.max.bytes";
  } catch (const KafkaError& e) {
    EXPECT_NE(std::string(e.what()).find("big-topic"), std::string::npos) << e.what();
    EXPECT_EQ(e.code_name(), "MSG_SIZE_TOO_LARGE");
  }
  EXPECT_EQ(producer.in_flight(), 0u);
  EXPECT_TRUE(producer.flush(1s));
  EXPECT_FALSE(called);
}

TEST(KafkaProducer, UndeliverableRecordReportsFailureFromFlush) {
  auto options = unreachable_producer();
  options.properties = {{"message.timeout.ms", "300"}};
  KafkaProducer producer(options);
  std::vector<DeliveryReport> reports;
  producer.produce(
      {.topic = "t", .key = "k", .payload = "v", .headers = {{"h", "1"}}, .partition = -1, .owner = nullptr},
      [&](const DeliveryReport& r) { reports.push_back(r); });
  EXPECT_EQ(producer.in_flight(), 1u);
  EXPECT_TRUE(producer.flush(30s));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_FALSE(reports[0].delivered);
  EXPECT_FALSE(reports[0].error.empty());
  EXPECT_EQ(producer.in_flight(), 0u);
}

TEST(KafkaProducer, CallbackExceptionIsRethrownFromFlush) {
  auto options = unreachable_producer();
  options.properties = {{"message.timeout.ms", "300"}};
  KafkaProducer producer(options);
  producer.produce(
      {.topic = "t", .key = std::nullopt, .payload = "v", .headers = {}, .partition = -1, .owner = nullptr},
      [](const DeliveryReport&) { throw std::runtime_error("callback failed"); });
  EXPECT_THROW(producer.flush(30s), std::runtime_error);
}

TEST(KafkaProducer, DestroyingWithQueuedRecordsDropsCallbacks) {
  bool called = false;
  {
    KafkaProducer producer(unreachable_producer());
    producer.produce(
        {.topic = "t", .key = std::nullopt, .payload = "v", .headers = {}, .partition = -1, .owner = nullptr},
        [&](const DeliveryReport&) { called = true; });
    EXPECT_FALSE(producer.flush(50ms));
  }
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace hbingest::connectors
