// deploy/prometheus/alerts.yml: promtool accepts the rules and their unit tests pass, the alerts
// the operator docs describe exist, and every expression names metrics the daemon exports.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "deploy_test_support.h"

namespace hbingest::deploy_test {
namespace {

std::filesystem::path rules_dir() { return source_dir() / "deploy" / "prometheus"; }

class PrometheusRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_program("promtool")) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
};

TEST_F(PrometheusRulesTest, PromtoolChecksRules) {
  const auto result = run({"promtool", "check", "rules", (rules_dir() / "alerts.yml").string()});
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST_F(PrometheusRulesTest, PromtoolRuleUnitTestsPass) {
  // promtool resolves rule_files relative to the test file's directory.
  const auto result = run({"promtool", "test", "rules", (rules_dir() / "alerts_test.yml").string()});
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST(PrometheusRules, AlertsCoverTheFailureModesAndUseExportedMetrics) {
  const YAML::Node root = YAML::LoadFile((rules_dir() / "alerts.yml").string());
  std::set<std::string> alerts;
  for (const auto& group : root["groups"]) {
    for (const auto& rule : group["rules"]) {
      const auto name = rule["alert"].as<std::string>("");
      ASSERT_FALSE(name.empty()) << "only alerting rules belong in alerts.yml";
      alerts.insert(name);
      EXPECT_TRUE(rule["labels"]["severity"].IsScalar()) << name << ": severity label";
      EXPECT_TRUE(rule["annotations"]["summary"].IsScalar()) << name << ": summary";
      const auto expr = rule["expr"].as<std::string>();
      for (const auto& problem : check_promql_names(expr)) ADD_FAILURE() << name << ": " << problem;
    }
  }
  for (const char* expected : {"HbingestDown", "HbingestConsumerLagGrowing", "HbingestDeadLetterRateHigh",
                               "HbingestWriteRetries", "HbingestPartitionsPaused", "HbingestCommitFailures"}) {
    EXPECT_TRUE(alerts.contains(expected)) << expected;
  }
  // docs/operations.md explains each alert under its name.
  const std::string docs = read_file(source_dir() / "docs" / "operations.md");
  for (const auto& alert : alerts)
    EXPECT_NE(docs.find(alert), std::string::npos) << alert << " not in docs/operations.md";
}

// The name check itself must reject what the daemon does not export.
TEST(PrometheusRules, NameCheckRejectsUnknownMetricsAndLabels) {
  EXPECT_TRUE(check_promql_names("sum by (topic) (rate(hbingest_events_consumed_total[5m]))").empty());
  EXPECT_TRUE(
      check_promql_names("histogram_quantile(0.9, sum by (le) (rate(hbingest_write_latency_seconds_bucket[5m])))")
          .empty());
  EXPECT_FALSE(check_promql_names("rate(hbingest_events_total[5m])").empty());
  EXPECT_FALSE(check_promql_names("rate(hbingest_events_consumed_total_bucket[5m])").empty())
      << "a counter has no buckets";
  EXPECT_FALSE(check_promql_names("sum by (shard) (hbingest_consumer_lag)").empty());
  EXPECT_FALSE(check_promql_names("hbingest_dead_letters_total{result=\"failed\"}").empty());
  // Matchers are checked against the family's own labels: endpoint exists, but not on the lag.
  EXPECT_TRUE(check_promql_names("hbingest_kafka_commit_failures_total{mode=\"async\", job=\"hbingest\"}").empty());
  EXPECT_FALSE(check_promql_names("hbingest_consumer_lag{endpoint=\"h:9090\"}").empty());
  EXPECT_FALSE(check_promql_names("hbingest_write_latency_seconds_count{le=\"1\"}").empty()) << "only _bucket has le";
}

}  // namespace
}  // namespace hbingest::deploy_test
