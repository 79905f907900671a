// deploy/grafana/hbingest-dashboard.json: valid JSON, well-formed panels, PromQL that promtool
// parses, and only metric families and labels the daemon actually exports.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "deploy_test_support.h"

namespace hbingest::deploy_test {
namespace {

nlohmann::json load_dashboard() {
  return nlohmann::json::parse(read_file(source_dir() / "deploy" / "grafana" / "hbingest-dashboard.json"));
}

void collect_panels(const nlohmann::json& panels, std::vector<nlohmann::json>& out) {
  for (const auto& panel : panels) {
    out.push_back(panel);
    if (panel.contains("panels")) collect_panels(panel["panels"], out);
  }
}

std::vector<std::string> panel_exprs(const nlohmann::json& dashboard) {
  std::vector<nlohmann::json> panels;
  collect_panels(dashboard.at("panels"), panels);
  std::vector<std::string> exprs;
  for (const auto& panel : panels) {
    for (const auto& target : panel.value("targets", nlohmann::json::array())) exprs.push_back(target.at("expr"));
  }
  return exprs;
}

// Grafana's variables made concrete so promtool can parse the expression.
std::string concrete(std::string expr) {
  expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval|\$__interval)"), "5m");
  return std::regex_replace(expr, std::regex(R"(\$\{?[a-z_]+\}?)"), ".*");
}

TEST(GrafanaDashboard, PanelsAreWellFormed) {
  const auto dashboard = load_dashboard();
  EXPECT_FALSE(dashboard.value("title", "").empty());
  EXPECT_FALSE(dashboard.value("uid", "").empty());
  std::vector<nlohmann::json> panels;
  collect_panels(dashboard.at("panels"), panels);
  std::set<int> ids;
  for (const auto& panel : panels) {
    EXPECT_TRUE(ids.insert(panel.at("id").get<int>()).second) << "duplicate panel id " << panel.at("id");
    EXPECT_FALSE(panel.value("title", "").empty());
    for (const char* key : {"h", "w", "x", "y"}) EXPECT_TRUE(panel.at("gridPos").contains(key)) << panel["title"];
    EXPECT_LE(panel["gridPos"]["x"].get<int>() + panel["gridPos"]["w"].get<int>(), 24) << panel["title"];
    if (panel.at("type") == "row") continue;
    EXPECT_FALSE(panel.value("targets", nlohmann::json::array()).empty()) << panel["title"] << " has no query";
    EXPECT_EQ(panel.at("datasource").at("uid"), "${datasource}") << panel["title"];
  }
}

TEST(GrafanaDashboard, ExpressionsUseOnlyExportedMetricsAndLabels) {
  const auto dashboard = load_dashboard();
  auto exprs = panel_exprs(dashboard);
  for (const auto& variable : dashboard.at("templating").at("list")) {
    if (variable.value("type", "") == "query") exprs.push_back(variable.at("definition"));
  }
  ASSERT_GE(exprs.size(), 20u);
  for (const auto& expr : exprs) {
    EXPECT_NE(expr.find("hbingest_"), std::string::npos) << expr;
    for (const auto& problem : check_promql_names(expr)) ADD_FAILURE() << expr << "\n  " << problem;
  }
}

// The operator's questions the dashboard exists for, each answered by some panel.
TEST(GrafanaDashboard, CoversTheKeyMetrics) {
  std::string all;
  for (const auto& expr : panel_exprs(load_dashboard())) all += expr + "\n";
  for (const char* needle :
       {"hbingest_events_consumed_total", "hbingest_rows_written_all_total", "hbingest_dead_letters_total",
        "hbingest_events_invalid_total",
        "histogram_quantile(0.99, sum by (le) (rate(hbingest_write_latency_seconds_bucket",
        "histogram_quantile(0.5, sum by (le) (rate(hbingest_write_latency_seconds_bucket",
        "hbingest_end_to_end_latency_seconds_bucket", "hbingest_inflight_events", "hbingest_paused_partitions",
        "max by (topic, partition) (hbingest_consumer_lag", "sum by (bucket) (rate(hbingest_salt_bucket_rows_total",
        "hbingest_query_latency_seconds_bucket", "sum by (outcome) (rate(hbingest_queries_total"}) {
    EXPECT_NE(all.find(needle), std::string::npos) << "no panel queries " << needle;
  }
}

TEST(GrafanaDashboard, ExpressionsParse) {
  if (!have_program("promtool")) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  // promtool parses PromQL when it checks rules: wrap each expression in a recording rule.
  std::string rules = "groups:\n  - name: dashboard\n    rules:\n";
  int n = 0;
  for (const auto& expr : panel_exprs(load_dashboard())) {
    rules += "      - record: dashboard_expr_" + std::to_string(++n) +
             "\n        expr: " + nlohmann::json(concrete(expr)).dump() + "\n";
  }
  const TempDir dir;
  write_file(dir.path() / "dashboard_rules.yml", rules);
  const auto result = run({"promtool", "check", "rules", (dir.path() / "dashboard_rules.yml").string()});
  EXPECT_EQ(result.exit_code, 0) << result.output << "\n" << rules;
}

}  // namespace
}  // namespace hbingest::deploy_test
