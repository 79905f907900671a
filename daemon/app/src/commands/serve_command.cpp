// hbingest serve --config FILE: a read-only query server (/v1/events, /metrics, /healthz, /readyz)
// with no consumer, for scaling reads apart from ingest.

#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <thread>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/logging.h"
#include "hbingest/app/query_service.h"
#include "hbingest/app/signals.h"
#include "hbingest/app/systemd_notifier.h"
#include "hbingest/app/version.h"
#include "hbingest/app/wiring.h"
#include "hbingest/config/loader.h"
#include "hbingest/routing/build_routes.h"
#include "hbingest/server/service_endpoints.h"

namespace hbingest::app {

namespace {
constexpr std::chrono::milliseconds kStopPoll{200};
}

int serve_command(const Args& args) {
  CLI::App cli{"Serve queries over HTTP (/v1/events) without ingesting.", "hbingest serve"};
  std::string config_path;
  cli.add_option("--config", config_path, "config file (YAML)")->required();
  if (auto exit = parse_command_line(cli, args)) return *exit;

  config::LoadResult loaded = config::try_load_config(config_path);
  if (!loaded.problems.empty()) throw config::ConfigError(std::move(loaded.problems));
  const config::Config config = std::move(loaded.config);
  if (!config.http.enabled)
    throw std::invalid_argument(config.source.string() + ": http.enabled is false; serve has nothing to do");
  setup_logging(config.logging);
  for (const auto& warning : loaded.warnings) spdlog::warn("unsafe setting: {}", warning);
  const auto http_tls = http_tls_credentials(config.http);
  SignalWatcher signals(
      [config_path, http_tls] {
        reload_http_tls(http_tls.get());
        const auto reloaded = config::load_config(config_path);
        set_log_level(reloaded.logging.level);
        spdlog::info("log level reloaded: {}", reloaded.logging.level);
      },
      config.shutdown_deadline + SignalWatcher::kStopGrace);

  prometheus::Registry registry;  // outlives the query service and the server, which refer to it
  server::register_build_info(registry, kVersion);
  const routing::RouteSet routes = routing::build_routes(config);
  // Serving reads HBase only. Before the query service's connections; after the signal watcher, so
  // the keeper's thread inherits its blocked signals.
  const KerberosLogins kerberos_logins(config, KerberosLinks{.kafka = false, .hbase = true});
  QueryService queries(config, routes, &registry);
  // Declared last: stopped (its handler threads joined) before the query service goes.
  server::HttpServer server(http_server_options(config.http, http_tls));
  queries.mount(server);
  const auto ready = [&kerberos_logins] {
    auto reasons = kerberos_logins.not_ready_reasons();
    return server::Readiness{reasons.empty(), std::move(reasons)};
  };
  server::ScrapeTimeMetrics scrape_time;
  const auto kerberos_metrics =
      std::make_shared<KerberosMetrics>([&kerberos_logins] { return kerberos_logins.statuses(); });
  if (!kerberos_logins.empty()) scrape_time.emplace_back(kerberos_metrics);
  server::mount_service_endpoints(server, registry, scrape_time, ready, metrics_token(config.http));
  server.start();
  spdlog::info("hbingest serve: listening on {}:{} (read-only{})", server.host(), server.port(),
               http_tls ? ", HTTPS" : "");
  std::optional<server::HttpServer> health_server;
  if (config.http.health_listen) {
    health_server.emplace(health_server_options(config.http, http_tls));
    server::mount_service_endpoints(*health_server, registry, scrape_time, ready, metrics_token(config.http));
    health_server->start();
    spdlog::info("hbingest serve: health listener on {}:{}", health_server->host(), health_server->port());
  }

  const SystemdNotifier notifier;
  notifier.ready();
  while (!signals.stop_requested().load()) {
    std::this_thread::sleep_for(kStopPoll);
    if (notifier.watchdog_interval()) notifier.watchdog();
  }
  notifier.stopping();
  if (health_server) health_server->stop();
  server.stop();
  return 0;
}

}  // namespace hbingest::app
