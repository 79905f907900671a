#pragma once
// Private to hbingest::kafka: TLS and SASL failures of one client (consumer or producer), at
// startup and afterwards. Shared by KafkaSource and KafkaProducer.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "callback_guard.h"
#include "hbingest/support/rate_limited_log.h"

namespace hbingest::connectors::detail {

// librdkafka reports a failed TLS handshake or SASL login only through the error callback, and
// retries it forever; the owner's error callback hands every error to on_error() first.
// Not thread-safe: the error callback runs on the thread that polls, which is the one in
// check_startup() while it runs.
class SecurityWatch {
 public:
  // `what` names the client in messages ("kafka consumer"); `properties` are its librdkafka
  // properties (messages quote the non-secret ones that decide a failure); `on_failure` (may be
  // empty) hears of each failure after startup, run through `guard`.
  SecurityWatch(std::string what, std::map<std::string, std::string> properties,
                std::function<void(const std::string& description)> on_failure, CallbackGuard& guard);

  // True when the error was handled here: during check_startup() every error (a security failure
  // is reported by its exception, anything else by its warning when it gives up; librdkafka's own
  // log has the details); afterwards a TLS or SASL failure (logged at error level, rate-limited,
  // and passed to on_failure). False: the caller logs it as before.
  bool on_error(rd_kafka_resp_err_t err, const char* reason);

  // Waits until a broker answers a metadata request (TLS handshake and SASL login included) and
  // returns true; throws KafkaError naming the cause and the settings as soon as a TLS or SASL
  // failure is reported before that; returns false after `timeout` with neither (no broker
  // reachable yet: librdkafka keeps trying). Serves the error callback with rd_kafka_poll(): a
  // consumer must run it before rd_kafka_poll_set_consumer().
  bool check_startup(rd_kafka_t* rk, std::chrono::milliseconds timeout);

 private:
  std::string what_;
  std::map<std::string, std::string> properties_;
  std::function<void(const std::string&)> on_failure_;
  CallbackGuard& guard_;
  support::RateLimitedLog log_{std::chrono::seconds(10)};
  bool checking_ = false;
  struct Failure {
    rd_kafka_resp_err_t err;
    std::string reason;
  };
  std::optional<Failure> failure_;  // the first one seen while checking
};

}  // namespace hbingest::connectors::detail
