// hbingest run --config FILE [--progress]: the ingest daemon.

#include <prometheus/registry.h>
#include <CLI/CLI.hpp>
#include <algorithm>

#include <spdlog/spdlog.h>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <future>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/logging.h"
#include "hbingest/app/query_service.h"
#include "hbingest/app/signals.h"
#include "hbingest/app/systemd_notifier.h"
#include "hbingest/app/version.h"
#include "hbingest/app/wiring.h"
#include "hbingest/config/group_instance_id.h"
#include "hbingest/config/loader.h"
#include "hbingest/connectors/dead_letter_producer.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "hbingest/ingest/kafka_security_alarm.h"
#include "hbingest/ingest/pipeline.h"
#include "hbingest/ingest/pipeline_metrics.h"
#include "hbingest/ingest/readiness.h"
#include "hbingest/ingest/startup_timeline.h"
#include "hbingest/ingest/table_watch.h"
#include "hbingest/ingest/wall_clock.h"
#include "hbingest/routing/build_routes.h"
#include "hbingest/server/service_endpoints.h"
#include "hbingest/support/gateway_share.h"

namespace hbingest::app {

namespace {

constexpr std::chrono::milliseconds kProgressInterval{1000};
constexpr std::chrono::milliseconds kDeadLetterFlushTimeout{5000};

// Reports throughput and lag once a second: a terminal line, systemd STATUS=, and WATCHDOG=1 only
// while the pipeline loop keeps turning (a stuck pipeline stops the pings and systemd restarts it).
class ProgressReporter {
 public:
  ProgressReporter(const ingest::Pipeline& pipeline, const ingest::PipelineMetrics& metrics,
                   const SystemdNotifier& notifier, bool terminal)
      : pipeline_(pipeline), metrics_(metrics), notifier_(notifier), terminal_(terminal), thread_([this] { run(); }) {}
  ~ProgressReporter() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    if (terminal_) std::fputc('\n', stderr);
  }

 private:
  void run() {
    const auto interval = std::min(kProgressInterval, notifier_.watchdog_interval().value_or(kProgressInterval));
    std::uint64_t last_consumed = pipeline_.stats().consumed;
    auto last_time = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [&] { return stop_; })) {
      const auto& stats = pipeline_.stats();
      const auto now = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(now - last_time).count();
      const std::uint64_t consumed = stats.consumed;
      const double rate = seconds > 0 ? static_cast<double>(consumed - last_consumed) / seconds : 0;
      last_consumed = consumed;
      last_time = now;
      char line[256];
      std::snprintf(line, sizeof(line),
                    "%8.0f events/s | consumed %llu | lag %lld | rows written %llu | dlq %llu | skipped %llu | "
                    "in flight %zu | paused %zu",
                    rate, static_cast<unsigned long long>(consumed), static_cast<long long>(metrics_.total_lag()),
                    static_cast<unsigned long long>(stats.rows_stored.load()),
                    static_cast<unsigned long long>(stats.dead_lettered.load()),
                    static_cast<unsigned long long>(stats.skipped.load()), stats.inflight_rows.load(),
                    stats.paused_partitions.load());
      if (terminal_) std::fprintf(stderr, "\r%s", line);
      notifier_.status(line);
      const auto loop_age = now.time_since_epoch() - std::chrono::steady_clock::duration(stats.last_loop_ns.load());
      if (notifier_.watchdog_interval() && loop_age < 2 * *notifier_.watchdog_interval()) notifier_.watchdog();
    }
  }

  const ingest::Pipeline& pipeline_;
  const ingest::PipelineMetrics& metrics_;
  const SystemdNotifier& notifier_;
  bool terminal_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it reads exist
};

}  // namespace

int run_command(const Args& args) {
  // From here: the time to the first stored row counts the config load too.
  ingest::StartupTimeline timeline;
  CLI::App cli{"Consume the configured Kafka topics and write the events to HBase over Thrift2.", "hbingest run"};
  std::string config_path;
  bool progress = false;
  cli.add_option("--config", config_path, "config file (YAML)")->required();
  cli.add_flag("--progress", progress, "print a live one-line progress display on stderr");
  if (auto exit = parse_command_line(cli, args)) return *exit;

  config::LoadResult loaded = config::try_load_config(config_path);
  if (!loaded.problems.empty()) throw config::ConfigError(std::move(loaded.problems));
  const config::Config config = std::move(loaded.config);
  setup_logging(config.logging);
  timeline.mark("config loaded");
  for (const auto& warning : loaded.warnings) spdlog::warn("unsafe setting: {}", warning);
  // setenv before any thread: librdkafka's cyrus-sasl reads KRB5CCNAME from its own threads.
  set_kafka_ccache_env(config);
  // Before any other thread starts, so every thread inherits the blocked signal mask.
  // Loaded before serving anything, so a bad certificate stops the start with its file named.
  const auto http_tls = config.http.enabled ? http_tls_credentials(config.http) : nullptr;
  SignalWatcher signals(
      [config_path, http_tls] {
        reload_http_tls(http_tls.get());
        const auto reloaded = config::load_config(config_path);
        set_log_level(reloaded.logging.level);
        spdlog::info("log level reloaded: {}", reloaded.logging.level);
      },
      config.shutdown_deadline + SignalWatcher::kStopGrace);

  // The process's one registry: every family below registers here and /metrics serves it. Declared
  // before everything that keeps references into it, so it is destroyed after them.
  prometheus::Registry registry;
  server::register_build_info(registry, kVersion);
  const routing::RouteSet routes = routing::build_routes(config);
  // Before the first connection: a login that fails stops the start with its cause (wrong keytab,
  // unknown principal, clock skew, KDC unreachable). After the signal watcher: the keepers' threads
  // inherit its blocked signals. Declared before every client: they use the caches until destroyed.
  const KerberosLogins kerberos_logins(config, KerberosLinks{});
  // The table check waits on HBase while the dead-letter topic is ensured and the metrics are set
  // up, and it is over before the consumer subscribes: a daemon whose tables are missing must not
  // join the group at all. Joined and gone, it would take partitions from the other members, and
  // as a static member leave them unread until session.timeout.ms (review of issue 26), on every
  // restart of a crash loop.
  auto tables_checked = std::async(std::launch::async, [&] {
    connectors::HBaseAdmin admin(thrift2_options(config.hbase));
    if (config.table.create_table) {
      const auto report = ingest::bootstrap_tables(admin, route_tables(routes), table_settings(config));
      for (const auto& line : report.lines) spdlog::info("bootstrap: {}", line);
    }
    ingest::require_tables(
        admin, route_tables(routes),
        "run `hbingest bootstrap --config " + config.source.string() + "` or set table.create_table: true");
    timeline.mark("tables checked");
  });
  if (config.table.create_table) {
    connectors::KafkaProducer kafka_admin(dead_letter_options(config).producer);
    spdlog::info("bootstrap: {}", ingest::ensure_dead_letter_topic(kafka_admin, config.dlq.topic));
  }

  ingest::PipelineMetrics pipeline_metrics(registry, ingest::wall_clock_ms, metric_labels(config));
  auto source_options = kafka_source_options(config.kafka);
  const std::size_t read_ahead = kafka_read_ahead_bytes(config);
  source_options.properties["queued.max.messages.kbytes"] = std::to_string(read_ahead / 1024);
  pipeline_metrics.on_kafka_read_ahead(read_ahead);
  source_options.on_statistics = [&pipeline_metrics](const std::string& json) {
    pipeline_metrics.on_kafka_statistics(json);
  };
  // A TLS or SASL failure at startup throws from the constructors below (exit 1, naming the cause);
  // one after startup keeps the daemon running, counted and shown by /readyz (kafka_security_alarm.h).
  ingest::KafkaSecurityAlarm kafka_security;
  source_options.on_security_error = [&](const std::string& description) {
    pipeline_metrics.on_kafka_security_error("consumer");
    kafka_security.raise(description);
  };
  tables_checked.get();  // rethrows the table check's failure
  connectors::KafkaSource source(std::move(source_options));
  timeline.mark("consumer subscribed");
  auto letter_options = dead_letter_options(config);
  // No broker answered the consumer: waiting again for the producer would only delay the start.
  if (!source.broker_answered_at_startup()) letter_options.producer.startup_check_timeout = {};
  letter_options.producer.on_security_error = [&](const std::string& description) {
    pipeline_metrics.on_kafka_security_error("dead_letter");
    kafka_security.raise(description);
  };
  connectors::KafkaDeadLetterProducer dead_letters(std::move(letter_options));
  timeline.mark("dead-letter producer ready");

  const auto thrift2 = thrift2_options(config.hbase);
  // The startup check above only sees the tables once; this one keeps watching (a table dropped,
  // disabled or stripped of its family while we run) with its own connection, and holds the
  // writers' batches for a table known to be unavailable. Declared before the writers: they use it.
  connectors::HBaseAdmin watch_admin(thrift2);
  auto watch_options = table_watch_options(config);
  std::vector<std::string> watched;
  for (const auto& plan : route_tables(routes)) {
    watched.push_back(plan.table);
    auto& families = watch_options.table_families[plan.table];
    for (const auto& family : plan.families) {
      if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
    }
  }
  ingest::TableWatch table_watch(watched, std::move(watch_options), watch_admin, pipeline_metrics);
  table_watch.start();

  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < config.writer.writers; ++i) {
    sinks.push_back(connectors::make_thrift2_sink(thrift2, static_cast<std::size_t>(i)));
  }
  // Declared before the writers and the queries, which both use it: destroyed after them.
  support::GatewayShare gateway_share(writer_batches_while_querying(config.writer));
  ingest::WriterPool writers(std::move(sinks), write_options(config.writer), retry_policy(config.writer),
                             pipeline_metrics, &table_watch, {}, &gateway_share);
  auto ingest_options = pipeline_options(config);
  ingest_options.decoder.reads_key = routing::reads_decoded_key(routes);
  ingest_options.startup_timeline = &timeline;
  // A table a template makes from an event's values: watched from now on, checked (and under
  // table.create_table created) on the watch's thread while its first rows wait.
  ingest_options.on_new_table = [&table_watch](const std::string& table, const routing::Route& route) {
    table_watch.watch(table_plan(route, table));
  };
  ingest::Pipeline pipeline(std::move(ingest_options), source, dead_letters, writers, routes, pipeline_metrics,
                            ingest::wall_clock_ms);

  // Declared after the pipeline and its parts: destroyed first, so no handler outlives them. The
  // readiness gauge reads the pipeline; the server (declared last, stopped first) is the only one
  // that scrapes it.
  std::unique_ptr<QueryService> queries;
  std::shared_ptr<server::ReadinessGauge> ready_gauge;
  std::shared_ptr<KerberosMetrics> kerberos_metrics;
  std::unique_ptr<server::HttpServer> server;
  std::unique_ptr<server::HttpServer> health_server;
  if (config.http.enabled) {
    queries = std::make_unique<QueryService>(config, routes, &registry, &gateway_share);
    server = std::make_unique<server::HttpServer>(http_server_options(config.http, http_tls));
    queries->mount(*server);
    const auto readiness = [&] {
      auto reasons = ingest::not_ready_reasons(pipeline.stats(), writers, &table_watch, &kafka_security);
      for (auto& reason : kerberos_logins.not_ready_reasons()) reasons.push_back(std::move(reason));
      return server::Readiness{reasons.empty(), std::move(reasons)};
    };
    ready_gauge = std::make_shared<server::ReadinessGauge>(readiness);
    server::ScrapeTimeMetrics scrape_time{ready_gauge};
    if (!kerberos_logins.empty()) {
      kerberos_metrics = std::make_shared<KerberosMetrics>([&kerberos_logins] { return kerberos_logins.statuses(); });
      scrape_time.emplace_back(kerberos_metrics);
    }
    server::mount_service_endpoints(*server, registry, scrape_time, readiness, metrics_token(config.http));
    server->start();
    spdlog::info("HTTP{} on {}:{} (/v1/events, /metrics, /healthz, /readyz)", http_tls ? "S" : "", server->host(),
                 server->port());
    if (config.http.health_listen) {
      health_server = std::make_unique<server::HttpServer>(health_server_options(config.http, http_tls));
      server::mount_service_endpoints(*health_server, registry, scrape_time, readiness, metrics_token(config.http));
      health_server->start();
      spdlog::info("HTTP{} health listener on {}:{} (/metrics, /healthz, /readyz)", http_tls ? "S" : "",
                   health_server->host(), health_server->port());
    }
  }

  SystemdNotifier notifier;
  notifier.ready();
  timeline.mark("ready to poll");
  const auto instance_id = config::resolve_group_instance_id(config.kafka.group_instance_id, config::host_name());
  spdlog::info("hbingest running: topics {}, group {}{}, {} writer(s) to {}", fmt::join(config.kafka.topics, ","),
               config.kafka.group_id, instance_id.empty() ? "" : " as static member " + instance_id,
               config.writer.writers, fmt::join(config.hbase.endpoints, ","));
  bool failed = false;
  {
    ProgressReporter reporter(pipeline, pipeline_metrics, notifier, progress);
    try {
      pipeline.run(signals.stop_requested());
    } catch (const std::exception& e) {
      // run() has already left the group, committing only what was stored; the rest of the
      // shutdown below is the same as after a signal. The message names the position
      // (topic/partition@offset) for an invalid event under dlq.on_invalid: fail.
      spdlog::critical("ingest stopped: {}", e.what());
      failed = true;
    }
    notifier.stopping();
  }
  // The drain is over: a table check hanging on a silent gateway ends while the rest shuts down.
  table_watch.stop();
  // The pipeline has waited for every letter it sent; this flush only bounds what librdkafka still
  // holds, within what is left of the shutdown budget.
  const auto flush_time = pipeline.shutdown_budget().left_for(ingest::ShutdownStep::leave, kDeadLetterFlushTimeout);
  if (!dead_letters.flush(flush_time)) spdlog::warn("dead-letter producer did not drain in time");
  writers.stop();
  if (health_server) health_server->stop();
  if (server) server->stop();
  spdlog::info("stopped: consumed {}, rows written {}, dead letters {}", pipeline.stats().consumed.load(),
               pipeline.stats().rows_stored.load(), pipeline.stats().dead_lettered.load());
  return failed ? 1 : 0;
}

}  // namespace hbingest::app
