// TLS/SASL failure classification, the operator's message, and the startup check against peers
// that fail the way a misconfigured broker does (the real broker cases are in test_tls.py).

#include "hbingest/connectors/kafka_security.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "hbingest/connectors/kafka_error.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/connectors/kafka_source.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

TEST(KafkaSecurity, ClassifiesTlsAndSaslFailuresApartFromNetworkTrouble) {
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR__SSL), SecurityFailure::tls);
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR__AUTHENTICATION), SecurityFailure::authentication);
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED), SecurityFailure::authentication);
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM), SecurityFailure::authentication);
  // A broker refusing our certificate: its alert arrives after our side of the TLS 1.3 handshake,
  // as a receive failure (seen from Kafka 3.9 with an expired client certificate).
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR__TRANSPORT,
                                    "ssl://127.0.0.1:24096/bootstrap: Receive failed: error:0A000416:SSL "
                                    "routines::sslv3 alert certificate unknown: SSL alert number 46"),
            SecurityFailure::tls);
  // A broker going away mid-stream is not a security failure, OpenSSL error text or not.
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR__TRANSPORT,
                                    "ssl://b:9093/1: Receive failed: error:0A000126:SSL routines::unexpected eof "
                                    "while reading"),
            SecurityFailure::none);
  EXPECT_EQ(classify_security_error(RD_KAFKA_RESP_ERR__TRANSPORT, "b:9092/1: Disconnected"), SecurityFailure::none);
  // librdkafka rides these out by itself: a broker restarting, a network blip.
  for (const auto err : {RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__RESOLVE,
                         RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR_NO_ERROR}) {
    EXPECT_EQ(classify_security_error(err), SecurityFailure::none) << rd_kafka_err2name(err);
  }
}

TEST(KafkaSecurity, DescriptionNamesTheSettingsButNoSecret) {
  const std::map<std::string, std::string> properties = {{"security.protocol", "sasl_ssl"},
                                                         {"ssl.ca.location", "/etc/hbingest/ca.pem"},
                                                         {"ssl.key.password", "key-secret"},
                                                         {"sasl.mechanisms", "SCRAM-SHA-512"},
                                                         {"sasl.username", "ingest"},
                                                         {"sasl.password", "hunter2"},
                                                         {"ssl.certificate.location", "/c.pem"},
                                                         {"ssl.key.location", "/c.key"}};
  const std::string tls = describe_security_failure("kafka consumer", RD_KAFKA_RESP_ERR__SSL,
                                                    "ssl://b:9093/bootstrap: SSL handshake failed", properties);
  EXPECT_NE(tls.find("kafka consumer: TLS failed: ssl://b:9093/bootstrap: SSL handshake failed"), std::string::npos)
      << tls;
  EXPECT_NE(tls.find("ssl.ca.location=/etc/hbingest/ca.pem"), std::string::npos) << tls;
  EXPECT_NE(tls.find("ssl.certificate.location=/c.pem"), std::string::npos) << tls;
  EXPECT_NE(tls.find("[_SSL]"), std::string::npos) << tls;

  const std::string sasl = describe_security_failure("kafka producer", RD_KAFKA_RESP_ERR__AUTHENTICATION,
                                                     "SASL authentication error: invalid credentials", properties);
  EXPECT_NE(sasl.find("kafka producer: SASL authentication failed:"), std::string::npos) << sasl;
  EXPECT_NE(sasl.find("sasl.mechanisms=SCRAM-SHA-512, sasl.username=ingest"), std::string::npos) << sasl;
  for (const auto& text : {tls, sasl}) {
    EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
    EXPECT_EQ(text.find("key-secret"), std::string::npos) << text;
  }
}

TEST(KafkaSecurity, GssapiIsRecognisedInEitherSpellingAndAnyCase) {
  EXPECT_TRUE(uses_gssapi({{"sasl.mechanism", "GSSAPI"}}));
  EXPECT_TRUE(uses_gssapi({{"sasl.mechanisms", "gssapi"}}));
  EXPECT_TRUE(uses_gssapi({{"sasl.mechanism", "GssApi"}}));
  EXPECT_FALSE(uses_gssapi({{"sasl.mechanism", "SCRAM-SHA-512"}}));
  EXPECT_FALSE(uses_gssapi({{"sasl.mechanism", "GSSAPI "}}));  // librdkafka would refuse it too
  EXPECT_FALSE(uses_gssapi({{"security.protocol", "sasl_plaintext"}}));
  EXPECT_FALSE(uses_gssapi({}));
}

TEST(KafkaSecurity, OwnKerberosLoginTurnsLibrdkafkasKinitOff) {
  std::map<std::string, std::string> properties = {{"sasl.mechanism", "GSSAPI"},
                                                   {"sasl.kerberos.min.time.before.relogin", "60000"}};
  use_own_kerberos_login(properties);
  EXPECT_EQ(properties.at("sasl.kerberos.min.time.before.relogin"), "0");
}

TEST(KafkaSecurity, GssapiFailureNamesThePrincipalsAndWhereTheTicketComesFrom) {
  const std::map<std::string, std::string> properties = {{"security.protocol", "SASL_PLAINTEXT"},
                                                         {"sasl.mechanism", "GSSAPI"},
                                                         {"sasl.kerberos.principal", "hbingest@HBSTACK.TEST"},
                                                         {"sasl.kerberos.keytab", "/etc/hbingest/hbingest.keytab"},
                                                         {"sasl.kerberos.service.name", "kafka"}};
  const std::string text = describe_security_failure(
      "kafka consumer", RD_KAFKA_RESP_ERR__AUTHENTICATION,
      "SASL authentication error: GSSAPI Error: Unspecified GSS failure (Server not found in Kerberos database)",
      properties);
  EXPECT_NE(text.find("sasl.kerberos.principal=hbingest@HBSTACK.TEST"), std::string::npos) << text;
  EXPECT_NE(text.find("sasl.kerberos.service.name=kafka"), std::string::npos) << text;
  EXPECT_NE(text.find("Server not found in Kerberos database"), std::string::npos) << text;
  EXPECT_NE(text.find("keytab login"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

// A listener that answers every connection with bytes that are not TLS, then closes it: what a
// client configured for TLS sees when the port speaks plain text (or something else entirely).
class NotTlsServer {
 public:
  NotTlsServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0) {
      throw std::runtime_error("NotTlsServer: bind/listen failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) break;
        static constexpr char kReply[] = "HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        [[maybe_unused]] const auto sent = ::send(client, kReply, sizeof kReply - 1, MSG_NOSIGNAL);
        ::close(client);
      }
    });
  }
  ~NotTlsServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

KafkaSourceOptions consumer_options(const std::string& bootstrap) {
  KafkaSourceOptions options;
  options.bootstrap_servers = bootstrap;
  options.group_id = "hbingest-unit";
  options.topics = {"events"};
  options.close_timeout = 2s;
  options.properties = {{"session.timeout.ms", "1000"}, {"heartbeat.interval.ms", "300"}};
  return options;
}

TEST(KafkaStartupCheck, ConsumerStopsOnTlsFailureWithTheCause) {
  NotTlsServer server;
  auto options = consumer_options(server.address());
  options.properties["security.protocol"] = "ssl";
  options.startup_check_timeout = 20s;
  const auto start = std::chrono::steady_clock::now();
  try {
    KafkaSource source(options);
    FAIL() << "the consumer started although its TLS handshake failed";
  } catch (const KafkaError& e) {
    EXPECT_EQ(classify_security_error(e.code()), SecurityFailure::tls) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find("kafka consumer: TLS failed:"), std::string::npos) << message;
    EXPECT_NE(message.find(server.address()), std::string::npos) << "names the broker: " << message;
    EXPECT_NE(message.find("security.protocol=ssl"), std::string::npos) << message;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s) << "stops on the failure, not at the timeout";
}

TEST(KafkaStartupCheck, ProducerStopsOnTlsFailureWithTheCause) {
  NotTlsServer server;
  KafkaProducerOptions options;
  options.bootstrap_servers = server.address();
  options.properties = {{"security.protocol", "ssl"}};
  options.startup_check_timeout = 20s;
  try {
    KafkaProducer producer(options);
    FAIL() << "the producer started although its TLS handshake failed";
  } catch (const KafkaError& e) {
    EXPECT_EQ(classify_security_error(e.code()), SecurityFailure::tls) << e.what();
    EXPECT_NE(std::string(e.what()).find("kafka producer: TLS failed:"), std::string::npos) << e.what();
  }
}

TEST(KafkaStartupCheck, UnreachableBrokerOnlyDelaysTheStartByTheTimeout) {
  auto options = consumer_options("127.0.0.1:1");  // refused: no error that retrying cannot fix
  options.startup_check_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  KafkaSource source(options);  // must not throw: the broker may come later
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_FALSE(source.broker_answered_at_startup());
  EXPECT_TRUE(source.poll(10, 10ms).empty());
}

TEST(KafkaStartupCheck, SecurityFailureAfterStartupGoesToTheCallback) {
  // Without the startup check, the same failure comes later, from poll(): reported, not thrown.
  NotTlsServer server;
  auto options = consumer_options(server.address());
  options.properties["security.protocol"] = "ssl";
  std::vector<std::string> reported;
  options.on_security_error = [&](const std::string& description) { reported.push_back(description); };
  KafkaSource source(options);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (reported.empty() && std::chrono::steady_clock::now() < deadline) EXPECT_NO_THROW(source.poll(10, 100ms));
  ASSERT_FALSE(reported.empty()) << "no TLS failure reported within 20 s";
  EXPECT_NE(reported.front().find("kafka consumer: TLS failed:"), std::string::npos) << reported.front();
}

}  // namespace
}  // namespace hbingest::connectors
