// hbingest metrics-catalog: prints the Prometheus exposition of every metric family `run` and
// `serve` export, without Kafka or HBase. It registers them through the same classes the daemon
// uses (PipelineMetrics, QueryMetrics, build info, the readiness gauge), then reports one sample
// event through each hook so that every family shows a child with its real label names; values
// and label values are placeholders. tests/deploy checks the dashboard and alert rules against it.

#include <prometheus/registry.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "../query_metrics.h"
#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/version.h"
#include "hbingest/ingest/pipeline_metrics.h"
#include "hbingest/server/service_endpoints.h"

namespace hbingest::app {

namespace {

constexpr std::int64_t kSampleNowMs = 1'700'000'000'000;

// One call of every PipelineObserver hook (and of the consumer's feeds), so that each family has a
// child. A hook added to PipelineObserver belongs here too.
void record_pipeline_samples(ingest::PipelineMetrics& metrics) {
  metrics.on_consumed("events", "login", 512);
  metrics.on_invalid("invalid_json");
  metrics.on_dead_letter(connectors::DeadLetterOutcome::delivered);
  metrics.on_dead_letter(connectors::DeadLetterOutcome::failed);
  metrics.on_dead_letter(connectors::DeadLetterOutcome::rejected);
  metrics.on_dead_letters_retrying(0, std::chrono::milliseconds(0));
  metrics.on_expired();
  metrics.on_row_queued(0, kSampleNowMs);
  metrics.on_batch_written("hbase-thrift:9090", 100, 51200, std::chrono::milliseconds(12), kSampleNowMs - 250);
  metrics.on_write_retry("hbase-thrift:9090", "putMultiple");
  metrics.on_write_unexpected_error("hbase-thrift:9090");
  metrics.on_rows_rejected(1);
  metrics.on_inflight(100, 51200);
  metrics.on_paused_partitions(0);
  metrics.on_commit("events", 0, 1000);
  metrics.on_commit_failure();
  metrics.on_async_commit_failure();
  metrics.on_table_available("default:events", true);
  metrics.on_kafka_statistics(R"({"topics": {"events": {"partitions": {"0": {"consumer_lag": 0}}}}})");
}

void record_query_samples(QueryMetrics& metrics) {
  metrics.on_scanner_open();
  metrics.on_query(query::QueryOutcome::ok, std::chrono::milliseconds(20), 10);
}

}  // namespace

int metrics_catalog_command(const Args& args) {
  CLI::App cli{
      "Print every metric family the daemon exports (Prometheus text format, placeholder values). "
      "Needs no Kafka or HBase.",
      "hbingest metrics-catalog"};
  if (auto exit = parse_command_line(cli, args)) return *exit;

  prometheus::Registry registry;
  server::register_build_info(registry, kVersion);
  ingest::PipelineMetrics pipeline_metrics(registry, [] { return kSampleNowMs; }, {{"login"}, {"events"}});
  QueryMetrics query_metrics(registry);
  const auto ready_gauge = std::make_shared<server::ReadinessGauge>([] { return server::Readiness{}; });
  // One sample link: the families exist only where a link uses GSSAPI.
  const auto kerberos_metrics = std::make_shared<KerberosMetrics>([] {
    kerberos::KeeperStatus status;
    status.link = "hbase";
    status.valid_until = std::chrono::system_clock::time_point(std::chrono::milliseconds(kSampleNowMs));
    return std::vector<kerberos::KeeperStatus>{status};
  });
  record_pipeline_samples(pipeline_metrics);
  record_query_samples(query_metrics);
  const std::string text = server::metrics_text(registry, {ready_gauge, kerberos_metrics});
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace hbingest::app
