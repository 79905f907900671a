#pragma once
// What /readyz says about Kafka TLS or SASL failures after startup (a certificate rotated wrongly, a
// password changed): librdkafka keeps retrying, the daemon keeps running (a restart would fail the
// same way, at its startup check, and turn a degraded daemon into a crash loop), and readiness
// names the failure until it has not been reported for `window`.

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace hbingest::ingest {

class KafkaSecurityAlarm {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // librdkafka retries a broker at least every reconnect.backoff.max.ms (10 s by default), each
  // failure reported again: a window of several such periods does not flap while it persists.
  static constexpr std::chrono::seconds kDefaultWindow{60};

  explicit KafkaSecurityAlarm(std::chrono::steady_clock::duration window = kDefaultWindow,
                              Clock clock = std::chrono::steady_clock::now);

  // One failure (the connector's description). Any thread.
  void raise(std::string description);
  // The last failure while it is younger than the window. Any thread.
  std::optional<std::string> active() const;

 private:
  std::chrono::steady_clock::duration window_;
  Clock clock_;
  mutable std::mutex mutex_;
  std::optional<std::string> last_;
  std::chrono::steady_clock::time_point last_time_{};
};

}  // namespace hbingest::ingest
