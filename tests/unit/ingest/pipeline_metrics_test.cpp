// PipelineMetrics over a real prometheus::Registry: what the hooks record, and that a revoked
// partition's series go away.

#include "hbingest/ingest/pipeline_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <string>

namespace hbingest::ingest {
namespace {

std::string exposition(const prometheus::Registry& registry) {
  return prometheus::TextSerializer{}.Serialize(registry.Collect());
}

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// What hbingest::app derives from a config with routes for login and order, subscribed to "events".
MetricLabels configured_labels() { return MetricLabels{{"login", "order"}, {"events"}}; }

// The exposition lines (series) of one metric name.
std::size_t series_of(const std::string& text, const std::string& name) {
  std::size_t count = 0;
  for (std::size_t at = 0; (at = text.find("\n" + name + "{", at)) != std::string::npos; ++at) ++count;
  return count;
}

TEST(PipelineMetrics, TableAvailabilityIsAGaugePerRouteTable) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  metrics.on_table_available("default:a", true);
  metrics.on_table_available("default:b", false);
  std::string text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_table_available{table="default:a"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_table_available{table="default:b"} 0)")) << text;
  metrics.on_table_available("default:b", true);
  text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_table_available{table="default:b"} 1)")) << text;
}

TEST(PipelineMetrics, RecordsIntoTheRegistry) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{10'000}; }, configured_labels());
  metrics.on_consumed("events", "login", 100);
  metrics.on_consumed("events", "login", 50);
  metrics.on_consumed("events", "", 1);
  metrics.on_row_queued(3, 0);
  metrics.on_row_queued(3, 0);
  metrics.on_batch_written("h:9090", 7, 700, std::chrono::milliseconds(3), 9'000);
  metrics.on_commit_failure();
  const std::string text = exposition(registry);
  // Created at 0 so that the first failure shows in increase().
  EXPECT_TRUE(has(text, R"(hbingest_kafka_commit_failures_total{mode="async"} 0)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_events_consumed_total{event_type="login",topic="events"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_events_consumed_total{event_type="other",topic="events"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_consumed_bytes_total{topic="events"} 151)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_salt_bucket_rows_total{bucket="3"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_rows_written_total{endpoint="h:9090"} 7)")) << text;
  EXPECT_TRUE(has(text, "hbingest_rows_written_all_total 7")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_batch_rows_bucket{le="10"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_batch_rows_bucket{le="1"} 0)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_end_to_end_latency_seconds_bucket{le="1"} 1)")) << text;  // 1 s old
  EXPECT_TRUE(has(text, R"(hbingest_end_to_end_latency_seconds_bucket{le="0.5"} 0)")) << text;
  EXPECT_TRUE(has(text, "hbingest_commit_failures_total 1")) << text;
  EXPECT_DOUBLE_EQ(metrics.rows_written(), 7);
  // Families without a child yet are left out, as before.
  EXPECT_EQ(text.find("hbingest_write_retries_total"), std::string::npos) << text;
}

TEST(PipelineMetrics, CountsAsynchronousCommitFailuresApartFromSynchronousOnes) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  metrics.on_async_commit_failure();
  metrics.on_async_commit_failure();
  const std::string text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_kafka_commit_failures_total{mode="async"} 2)")) << text;
  EXPECT_TRUE(has(text, "hbingest_commit_failures_total 0")) << text;
}

TEST(PipelineMetrics, DeadLetterOutcomesAndTheRetryGauges) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  std::string text = exposition(registry);
  // Present at 0 before any letter: the stuck-letter alert compares a series that always exists.
  EXPECT_TRUE(has(text, "hbingest_dead_letters_retrying 0")) << text;
  EXPECT_TRUE(has(text, "hbingest_dead_letter_oldest_retry_seconds 0")) << text;

  metrics.on_dead_letter(connectors::DeadLetterOutcome::rejected);
  metrics.on_dead_letter(connectors::DeadLetterOutcome::failed);
  metrics.on_dead_letter(connectors::DeadLetterOutcome::delivered);
  metrics.on_dead_letter(connectors::DeadLetterOutcome::delivered);
  metrics.on_dead_letters_retrying(2, std::chrono::milliseconds(1500));
  text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_dead_letters_total{outcome="rejected"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_dead_letters_total{outcome="failed"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_dead_letters_total{outcome="delivered"} 2)")) << text;
  EXPECT_TRUE(has(text, "hbingest_dead_letters_retrying 2")) << text;
  EXPECT_TRUE(has(text, "hbingest_dead_letter_oldest_retry_seconds 1.5")) << text;

  metrics.on_dead_letters_retrying(0, std::chrono::milliseconds(0));
  text = exposition(registry);
  EXPECT_TRUE(has(text, "hbingest_dead_letters_retrying 0")) << text;
  EXPECT_TRUE(has(text, "hbingest_dead_letter_oldest_retry_seconds 0")) << text;
}

TEST(PipelineMetrics, RevokedPartitionsLoseTheirLagAndOffsetSeries) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  EXPECT_EQ(metrics.total_lag(), -1);
  metrics.on_kafka_statistics(R"({"topics": {"events": {"partitions": {
      "0": {"consumer_lag": 5}, "1": {"consumer_lag": 7}, "-1": {"consumer_lag": 100}}}}})");
  metrics.on_commit("events", 0, 40);
  metrics.on_commit("events", 1, 41);
  EXPECT_EQ(metrics.total_lag(), 12);
  std::string text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_consumer_lag{partition="1",topic="events"} 7)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_committed_offset{partition="1",topic="events"} 41)")) << text;
  EXPECT_EQ(text.find(R"(partition="-1")"), std::string::npos) << text;

  metrics.on_partitions_revoked({{"events", 1}, {"events", 9}});  // 9 never had series
  text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_consumer_lag{partition="0",topic="events"} 5)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_committed_offset{partition="0",topic="events"} 40)")) << text;
  EXPECT_EQ(text.find(R"(partition="1")"), std::string::npos) << text;

  // Assigned again later: the series come back from the next report and commit.
  metrics.on_commit("events", 1, 50);
  metrics.on_kafka_statistics(R"({"topics": {"events": {"partitions": {"1": {"consumer_lag": 2}}}}})");
  text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_consumer_lag{partition="1",topic="events"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_committed_offset{partition="1",topic="events"} 50)")) << text;

  metrics.on_partitions_revoked({{"events", 0}, {"events", 1}});
  text = exposition(registry);
  EXPECT_EQ(text.find("hbingest_consumer_lag"), std::string::npos) << text;
  EXPECT_EQ(text.find("hbingest_committed_offset"), std::string::npos) << text;
}

}  // namespace
}  // namespace hbingest::ingest

namespace hbingest::ingest {
namespace {

// A producer controls the event type: 10,000 distinct ones, some 64 KiB long, must not become
// 10,000 series (each one kept in the registry and in every scrape).
TEST(PipelineMetrics, EventTypesFromEventsNeverBecomeLabels) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  const std::string long_prefix(64 * 1024, 'x');
  for (int i = 0; i < 10'000; ++i) {
    const std::string type = (i % 100 == 0 ? long_prefix : std::string("type-")) + std::to_string(i);
    metrics.on_consumed("events", type, 10);
  }
  metrics.on_consumed("events", "login", 10);
  metrics.on_consumed("events", "order", 10);
  metrics.on_consumed("events", "", 10);  // undecodable: no type at all
  const std::string text = exposition(registry);
  EXPECT_EQ(series_of(text, "hbingest_events_consumed_total"), configured_labels().event_types.size() + 1) << text;
  EXPECT_TRUE(has(text, R"(hbingest_events_consumed_total{event_type="other",topic="events"} 10001)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_events_consumed_total{event_type="login",topic="events"} 1)")) << text;
  EXPECT_EQ(series_of(text, "hbingest_consumed_bytes_total"), 1u) << text;
  EXPECT_LT(text.size(), 16u * 1024) << "the whole exposition";
}

// With a `^regex` subscription the broker names the topics: those are "other" too.
TEST(PipelineMetrics, TopicsNotConfiguredLiterallyAreOther) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  for (int i = 0; i < 1000; ++i) metrics.on_consumed("matched-" + std::to_string(i), "login", 1);
  metrics.on_consumed("events", "login", 1);
  const std::string text = exposition(registry);
  EXPECT_EQ(series_of(text, "hbingest_events_consumed_total"), 2u) << text;
  EXPECT_TRUE(has(text, R"(hbingest_events_consumed_total{event_type="login",topic="other"} 1000)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_consumed_bytes_total{topic="other"} 1000)")) << text;
  EXPECT_TRUE(has(text, R"(hbingest_consumed_bytes_total{topic="events"} 1)")) << text;
}

// Issue 22, defect 10d: the lag shown was librdkafka's consumer_lag from the last statistics report
// (seconds old, and counted from the last commit): 43,438 with everything consumed.
TEST(PipelineMetrics, TheLagIsTheLatestKnownEndMinusThePositionConsumedNow) {
  prometheus::Registry registry;
  PipelineMetrics metrics(
      registry, [] { return std::int64_t{0}; }, configured_labels());
  metrics.on_kafka_statistics(R"({"topics": {"events": {"partitions": {
      "0": {"consumer_lag": 43438, "hi_offset": 50000, "ls_offset": 50000},
      "1": {"consumer_lag": -1, "hi_offset": 700, "ls_offset": 700}}}}})");
  EXPECT_EQ(metrics.total_lag(), 43438) << "no position consumed yet: librdkafka's figure";
  metrics.on_consumed_position("events", 0, 50000);  // everything consumed
  EXPECT_EQ(metrics.total_lag(), 0);
  std::string text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_consumer_lag{partition="0",topic="events"} 0)")) << text;
  EXPECT_EQ(text.find(R"(partition="1")"), std::string::npos) << "not assigned here: " << text;

  metrics.on_consumed_position("events", 0, 48000);  // its offsets went back (a new era)
  EXPECT_EQ(metrics.total_lag(), 2000);
  metrics.on_consumed_position("events", 0, 50500);  // past the end the last report knew
  EXPECT_EQ(metrics.total_lag(), 0);
  metrics.on_kafka_statistics(R"({"topics": {"events": {"partitions": {
      "0": {"consumer_lag": 900, "hi_offset": 51000, "ls_offset": 51000}}}}})");
  EXPECT_EQ(metrics.total_lag(), 500);
  text = exposition(registry);
  EXPECT_TRUE(has(text, R"(hbingest_consumer_lag{partition="0",topic="events"} 500)")) << text;
}

}  // namespace
}  // namespace hbingest::ingest
