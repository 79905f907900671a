#include "hbingest/ingest/kafka_security_alarm.h"

#include <utility>

namespace hbingest::ingest {

KafkaSecurityAlarm::KafkaSecurityAlarm(std::chrono::steady_clock::duration window, Clock clock)
    : window_(window), clock_(std::move(clock)) {}

void KafkaSecurityAlarm::raise(std::string description) {
  const auto now = clock_();
  std::lock_guard lock(mutex_);
  last_ = std::move(description);
  last_time_ = now;
}

std::optional<std::string> KafkaSecurityAlarm::active() const {
  const auto now = clock_();
  std::lock_guard lock(mutex_);
  if (!last_ || now - last_time_ >= window_) return std::nullopt;
  return last_;
}

}  // namespace hbingest::ingest
