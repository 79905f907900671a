#include "hbingest/ingest/kafka_security_alarm.h"

#include <gtest/gtest.h>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

TEST(KafkaSecurityAlarm, NamesTheLastFailureUntilTheWindowPassesWithoutOne) {
  auto now = std::chrono::steady_clock::time_point{} + 1h;
  KafkaSecurityAlarm alarm(60s, [&] { return now; });
  EXPECT_FALSE(alarm.active()) << "quiet before any failure";
  alarm.raise("kafka consumer: TLS failed: certificate verify failed");
  now += 59s;
  ASSERT_TRUE(alarm.active());
  EXPECT_EQ(*alarm.active(), "kafka consumer: TLS failed: certificate verify failed");
  alarm.raise("kafka producer: SASL authentication failed: invalid credentials");  // librdkafka retried
  now += 59s;
  ASSERT_TRUE(alarm.active()) << "a failure that keeps coming back keeps the alarm up";
  EXPECT_EQ(*alarm.active(), "kafka producer: SASL authentication failed: invalid credentials");
  now += 1s;
  EXPECT_FALSE(alarm.active()) << "60 s without a failure: fixed (or no reconnect needed)";
}

}  // namespace
}  // namespace hbingest::ingest
