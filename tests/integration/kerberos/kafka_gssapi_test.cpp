// Kafka over SASL GSSAPI with the daemon's own keytab login (the stack's SASL_PLAINTEXT/GSSAPI
// listener, HBINGEST_KAFKA_GSSAPI): a TicketKeeper fills the cache KRB5CCNAME names, librdkafka's
// kinit is off, and our producer and KafkaSource go through the listener; a broker principal the
// KDC does not know fails the startup check with a message that says so. Its own binary: KRB5CCNAME
// is set once, before librdkafka starts any thread, as the daemon does.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <string>

#include "hbingest/connectors/kafka_error.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/connectors/kafka_security.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/kerberos/ticket_keeper.h"
#include "kerberos_stack.h"

namespace hbingest::kerberos {
namespace {

using namespace std::chrono_literals;
using connectors::KafkaProducer;
using connectors::KafkaSource;

const std::string kCcache = "MEMORY:hbingest-kafka-it";

class KafkaGssapi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ::setenv("KRB5CCNAME", kCcache.c_str(), 1); }

  void SetUp() override {
    HBINGEST_REQUIRE_KERBEROS_STACK(stack_);
    const char* bootstrap = std::getenv("HBINGEST_KAFKA_GSSAPI");
    if (bootstrap == nullptr || *bootstrap == '\0') GTEST_SKIP() << "HBINGEST_KAFKA_GSSAPI is not set";
    bootstrap_ = bootstrap;
    suffix_ = std::to_string(::getpid());
  }

  std::map<std::string, std::string> properties(const std::string& service = "kafka") const {
    std::map<std::string, std::string> p = {{"security.protocol", "SASL_PLAINTEXT"},
                                            {"sasl.mechanism", "GSSAPI"},
                                            {"sasl.kerberos.service.name", service},
                                            {"sasl.kerberos.principal", stack_.principal("hbingest")},
                                            {"sasl.kerberos.keytab", stack_.keytab("hbingest.keytab")}};
    connectors::use_own_kerberos_login(p);
    return p;
  }

  LoginOptions login() const {
    return {"kafka", stack_.principal("hbingest"), stack_.keytab("hbingest.keytab"), kCcache};
  }

  testing::KerberosStack stack_;
  std::string bootstrap_;
  std::string suffix_;
};

TEST_F(KafkaGssapi, ProduceAndConsumeWithTheDaemonsOwnLogin) {
  const TicketKeeper keeper(login());
  const std::string topic = "hbi-gssapi-" + suffix_;
  constexpr int kMessages = 20;
  {
    connectors::KafkaProducerOptions options;
    options.bootstrap_servers = bootstrap_;
    options.properties = properties();
    options.startup_check_timeout = 20s;
    KafkaProducer producer(options);
    ASSERT_TRUE(producer.create_topic(topic, 2, 1, {}, 30s));
    int delivered = 0;
    std::string error;
    for (int i = 0; i < kMessages; ++i) {
      const std::string payload = "v" + std::to_string(i);
      producer.produce({.topic = topic,
                        .key = std::nullopt,
                        .payload = payload,
                        .headers = {},
                        .partition = i % 2,
                        .owner = nullptr},
                       [&](const connectors::DeliveryReport& r) {
                         if (r.delivered) {
                           ++delivered;
                         } else if (error.empty()) {
                           error = r.error;
                         }
                       });
    }
    ASSERT_TRUE(producer.flush(60s));
    ASSERT_EQ(delivered, kMessages) << error;
  }
  connectors::KafkaSourceOptions options;
  options.bootstrap_servers = bootstrap_;
  options.group_id = "hbi-gssapi-group-" + suffix_;
  options.topics = {topic};
  options.properties = properties();
  options.properties["auto.offset.reset"] = "earliest";
  options.startup_check_timeout = 20s;
  KafkaSource source(std::move(options));
  std::set<std::string> payloads;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (payloads.size() < kMessages && std::chrono::steady_clock::now() < deadline) {
    for (auto& message : source.poll(100, 200ms)) payloads.insert(message.payload.value_or(""));
  }
  EXPECT_EQ(payloads.size(), static_cast<std::size_t>(kMessages));
  EXPECT_EQ(keeper.status().failures, 0U);
}

TEST_F(KafkaGssapi, BrokerPrincipalTheKdcDoesNotKnowFailsTheStartupCheckClearly) {
  const TicketKeeper keeper(login());
  connectors::KafkaSourceOptions options;
  options.bootstrap_servers = bootstrap_;
  options.group_id = "hbi-gssapi-bad-" + suffix_;
  options.topics = {"hbi-gssapi-none"};
  options.properties = properties("notkafka");
  options.startup_check_timeout = 20s;
  try {
    KafkaSource source(std::move(options));
    FAIL() << "authenticated to a broker principal the KDC does not have";
  } catch (const connectors::KafkaError& e) {
    const std::string text = e.what();
    std::printf("%s\n", text.c_str());
    EXPECT_NE(text.find("SASL authentication failed"), std::string::npos) << text;
    EXPECT_NE(text.find("sasl.kerberos.service.name=notkafka"), std::string::npos) << text;
    EXPECT_NE(text.find("sasl.kerberos.principal=hbingest@" + stack_.realm), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace hbingest::kerberos
