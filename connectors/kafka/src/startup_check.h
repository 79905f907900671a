#pragma once
// Private to hbingest::kafka: the startup connection check shared by the consumer and the producer.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace hbingest::connectors::detail {

// At startup, waits until a broker answers a metadata request, which takes the TLS handshake and
// the SASL login. librdkafka reports a failed handshake or login only through the error callback
// (and then retries it forever), so the owner's error callback hands every error to on_error().
// Not thread-safe: the error callback runs on the thread that polls, which is the one in run().
class StartupCheck {
 public:
  // `what` names the client in messages ("kafka consumer"); `properties` are its librdkafka
  // properties (the failure message quotes the non-secret ones that decide it).
  StartupCheck(std::string what, std::map<std::string, std::string> properties);

  // From the error callback: true when `err` is a TLS or SASL failure, which run() then reports.
  bool on_error(rd_kafka_resp_err_t err, const char* reason);

  // Returns true once a broker answered; throws KafkaError naming the cause and the settings as
  // soon as a TLS or SASL failure is reported before that; returns false when `timeout` passed
  // with neither (no broker reachable yet: librdkafka keeps trying, as without the check). Serves
  // the error callback with rd_kafka_poll(): a consumer must run it before rd_kafka_poll_set_consumer.
  bool run(rd_kafka_t* rk, std::chrono::milliseconds timeout);

  // The operator's sentence for a security failure (see describe_security_failure).
  std::string describe(rd_kafka_resp_err_t err, const std::string& reason) const;

 private:
  std::string what_;
  std::map<std::string, std::string> properties_;
  struct Failure {
    rd_kafka_resp_err_t err;
    std::string reason;
  };
  std::optional<Failure> failure_;  // the first one seen
};

}  // namespace hbingest::connectors::detail
