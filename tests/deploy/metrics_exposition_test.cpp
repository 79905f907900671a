// The daemon's /metrics as `hbingest metrics-catalog` prints it (same registration code as `run`
// and `serve`): promtool accepts it, and every family keeps the name, type, label names and bucket
// bounds that the dashboard, the alert rules, the e2e tests and operators' own queries rely on.

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deploy_test_support.h"

namespace hbingest::deploy_test {
namespace {

struct ExpectedFamily {
  MetricType type;
  std::set<std::string> labels;
  std::vector<double> buckets = {};  // histograms: the finite upper bounds (+Inf is implicit)
};

// Changing a row here breaks someone's dashboard or alert: add new families, keep old ones.
const std::map<std::string, ExpectedFamily>& expected_families() {
  using enum MetricType;
  static const std::map<std::string, ExpectedFamily> families = {
      {"hbingest_build_info", {gauge, {"version"}}},
      {"hbingest_ready", {gauge, {}}},
      {"hbingest_events_consumed_total", {counter, {"topic", "event_type"}}},
      {"hbingest_consumed_bytes_total", {counter, {"topic"}}},
      {"hbingest_events_invalid_total", {counter, {"reason"}}},
      {"hbingest_dead_letters_total", {counter, {"outcome"}}},
      {"hbingest_dead_letters_retrying", {gauge, {}}},
      {"hbingest_dead_letter_oldest_retry_seconds", {gauge, {}}},
      {"hbingest_events_expired_total", {counter, {}}},
      {"hbingest_rows_written_total", {counter, {"endpoint"}}},
      {"hbingest_rows_written_all_total", {counter, {}}},
      {"hbingest_batches_written_total", {counter, {}}},
      {"hbingest_batch_rows", {histogram, {"le"}, {1, 10, 50, 100, 250, 500, 1000, 2500, 5000}}},
      {"hbingest_batch_bytes", {histogram, {"le"}, {1024, 16384, 65536, 262144, 1048576, 2097152, 4194304, 8388608}}},
      {"hbingest_write_latency_seconds",
       {histogram, {"le"}, {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}}},
      {"hbingest_end_to_end_latency_seconds",
       {histogram, {"le"}, {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 600}}},
      {"hbingest_write_retries_total", {counter, {"endpoint", "operation"}}},
      {"hbingest_write_unexpected_errors_total", {counter, {"endpoint"}}},
      {"hbingest_kerberos_ticket_valid_until_seconds", {gauge, {"link"}}},
      {"hbingest_kerberos_login_failures_total", {counter, {"link"}}},
      {"hbingest_rows_rejected_total", {counter, {}}},
      {"hbingest_inflight_events", {gauge, {}}},
      {"hbingest_inflight_bytes", {gauge, {}}},
      {"hbingest_paused_partitions", {gauge, {}}},
      {"hbingest_writer_inflight_batches_limit", {gauge, {}}},
      {"hbingest_inflight_rows_limit", {gauge, {}}},
      {"hbingest_inflight_rows_per_partition_limit", {gauge, {}}},
      {"hbingest_kafka_read_ahead_bytes", {gauge, {}}},
      {"hbingest_partitions_waiting_for_schema", {gauge, {}}},
      {"hbingest_schema_fetches_total", {counter, {}}},
      {"hbingest_schema_fetch_failures_total", {counter, {}}},
      {"hbingest_schema_cache_schemas", {gauge, {}}},
      {"hbingest_schema_cache_bytes", {gauge, {}}},
      {"hbingest_committed_offset", {gauge, {"topic", "partition"}}},
      {"hbingest_commit_failures_total", {counter, {}}},
      {"hbingest_kafka_commit_failures_total", {counter, {"mode"}}},
      {"hbingest_kafka_security_errors_total", {counter, {"client"}}},
      {"hbingest_consumer_lag", {gauge, {"topic", "partition"}}},
      {"hbingest_salt_bucket_rows_total", {counter, {"bucket"}}},
      {"hbingest_table_available", {gauge, {"table"}}},
      {"hbingest_queries_total", {counter, {"outcome"}}},
      {"hbingest_query_latency_seconds",
       {histogram, {"le"}, {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}}},
      {"hbingest_query_rows", {histogram, {"le"}, {0, 1, 10, 100, 1000, 10000, 100000}}},
      {"hbingest_query_open_scanners", {gauge, {}}},
  };
  return families;
}

// The finite `le` bounds of a histogram's _bucket series, in exposition order.
std::vector<double> bucket_bounds(const std::string& family) {
  const std::regex bucket("^" + family + R"re(_bucket\{(?:.*,)?le="([^"]+)"\} \S+$)re");
  std::vector<double> bounds;
  std::istringstream lines(metrics_catalog_text());
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, bucket) && match[1] != "+Inf") bounds.push_back(std::stod(match[1]));
  }
  return bounds;
}

TEST(MetricsExposition, PromtoolAcceptsIt) {
  // A missing promtool is a failure, not a skip: scripts/install-deps.sh installs it (package prometheus).
  ASSERT_TRUE(have_program("promtool")) << "promtool not installed (Debian package prometheus)";
  const TempDir dir;
  write_file(dir.path() / "exposition.txt", metrics_catalog_text());
  const auto result = run({"sh", "-c", "promtool check metrics < \"$0\"", (dir.path() / "exposition.txt").string()});
  EXPECT_EQ(result.exit_code, 0) << result.output << "\n" << metrics_catalog_text();
}

TEST(MetricsExposition, EveryFamilyKeepsItsTypeLabelsAndBuckets) {
  const auto& actual = daemon_metric_families();
  for (const auto& [name, expected] : expected_families()) {
    const auto it = actual.find(name);
    if (it == actual.end()) {
      ADD_FAILURE() << name << " is not exported";
      continue;
    }
    EXPECT_EQ(static_cast<int>(it->second.type), static_cast<int>(expected.type)) << name;
    EXPECT_EQ(it->second.labels, expected.labels) << name;
    if (expected.type == MetricType::histogram) {
      EXPECT_EQ(bucket_bounds(name), expected.buckets) << name;
    }
  }
  for (const auto& [name, family] : actual) {
    EXPECT_TRUE(expected_families().contains(name)) << name << " is new: add it to expected_families()";
  }
}

// tests/integration/python asserts on these in a live daemon's /metrics (it needs the stack, so
// the names are pinned here too).
TEST(MetricsExposition, HasWhatTheEndToEndTestsScrapeFor) {
  const std::string& text = metrics_catalog_text();
  for (const char* needle :
       {"hbingest_events_consumed_total{", "hbingest_rows_written_total{", "hbingest_rows_written_all_total ",
        "hbingest_batch_rows_bucket", "hbingest_write_latency_seconds_bucket",
        "hbingest_end_to_end_latency_seconds_count", "hbingest_salt_bucket_rows_total", "hbingest_committed_offset{",
        "hbingest_consumer_lag{", "hbingest_inflight_events ", "hbingest_events_invalid_total", "hbingest_build_info",
        "\nhbingest_ready 1\n", "hbingest_events_expired_total ", "hbingest_dead_letters_total{",
        "hbingest_paused_partitions ", "hbingest_write_retries_total{", "hbingest_query_open_scanners "}) {
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  }
}

}  // namespace
}  // namespace hbingest::deploy_test
