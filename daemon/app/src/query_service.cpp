#include "hbingest/app/query_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "hbingest/app/wiring.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "query_metrics.h"

namespace hbingest::app {

namespace {

constexpr int kHealthWorkers = 4;
constexpr int kHealthQueue = 16;
constexpr std::chrono::milliseconds kHealthKeepAlive{2000};

// Only the raw mode has a fixed set of qualifiers; field columns are whatever the events carry.
std::optional<std::set<std::string>> known_qualifiers(const config::DecodeConfig& decode) {
  if (decode.columns == config::ColumnsMode::raw) return std::set<std::string>{decode.raw_qualifier};
  return std::nullopt;
}

}  // namespace

server::HttpServerOptions http_server_options(const config::HttpConfig& http,
                                              std::shared_ptr<server::TlsCredentials> tls) {
  return server::HttpServerOptions{.listen = http.listen,
                                   .workers = http.workers,
                                   .max_queued_connections = http.max_queued_connections,
                                   .max_connections_per_client = http.max_connections_per_client,
                                   .max_header_bytes = http.max_header_bytes,
                                   .header_timeout = http.header_timeout,
                                   .keep_alive_timeout = http.keep_alive_timeout,
                                   .keep_alive_max_requests = http.keep_alive_max_requests,
                                   .write_timeout = http.write_timeout,
                                   .tls = std::move(tls)};
}

server::HttpServerOptions health_server_options(const config::HttpConfig& http,
                                                std::shared_ptr<server::TlsCredentials> tls) {
  auto options = http_server_options(http, std::move(tls));
  options.listen = http.health_listen.value_or("");
  // Probes and scrapes are short and few: a handful of workers, and idle connections let go soon.
  options.workers = kHealthWorkers;
  options.max_queued_connections = kHealthQueue;
  // A kubelet's liveness, readiness and startup probes may arrive at once from the node's address:
  // they get all workers but one, which stays for the other addresses (Prometheus).
  options.max_connections_per_client = kHealthWorkers - 1;
  options.keep_alive_timeout = std::min(options.keep_alive_timeout, kHealthKeepAlive);
  return options;
}

std::shared_ptr<server::TlsCredentials> http_tls_credentials(const config::HttpConfig& http) {
  if (!http.tls_cert_file || !http.tls_key_file) return nullptr;
  return std::make_shared<server::TlsCredentials>(*http.tls_cert_file, *http.tls_key_file);
}

void reload_http_tls(server::TlsCredentials* tls) {
  if (tls == nullptr) return;
  try {
    tls->reload();
    spdlog::info("http tls: certificate reloaded from {}", tls->cert_file());
  } catch (const std::exception& e) {
    spdlog::error("http tls: reload failed, still serving the previous certificate: {}", e.what());
  }
}

std::optional<std::string> metrics_token(const config::HttpConfig& http) {
  return http.metrics_auth ? http.bearer_token : std::nullopt;
}

struct QueryService::Impl {
  Impl(const config::Config& config, const ingest::Router& router_ref, prometheus::Registry* registry)
      : router(router_ref),
        family(config.decode.family),
        qualifiers(known_qualifiers(config.decode)),
        scanners(connectors::make_thrift2_scanner_factory(thrift2_options(config.hbase), config.query.concurrency)),
        observer(registry ? std::make_unique<QueryMetrics>(*registry) : nullptr),
        engine(*scanners, engine_options(config.query), observer.get()),
        handler(
            engine, [this](std::string_view id) { return lookup(id); },
            server::EventsHandlerOptions{.default_limit = config.query.default_limit,
                                         .max_limit = config.query.max_limit,
                                         .max_concurrent_queries = config.http.max_concurrent_queries,
                                         .bearer_token = config.http.bearer_token,
                                         .max_response_bytes = config.http.max_response_bytes}) {
    for (const auto& route : router.routes()) {
      specs.emplace(route.get(), std::make_shared<const keyspec::KeySpec>(route->spec));
    }
  }

  std::optional<query::EventRoute> lookup(std::string_view event_id) const {
    const ingest::Route* route = router.route(event_id);  // falls back to the default route
    if (route == nullptr) return std::nullopt;
    return query::EventRoute{route->table, specs.at(route), family, qualifiers};
  }

  const ingest::Router& router;
  std::string family;
  std::optional<std::set<std::string>> qualifiers;
  std::map<const ingest::Route*, std::shared_ptr<const keyspec::KeySpec>> specs;
  // Destruction order matters: the handler uses the engine, the engine the scanner pool.
  std::unique_ptr<connectors::Thrift2ScannerFactory> scanners;
  std::unique_ptr<QueryMetrics> observer;
  query::QueryEngine engine;
  server::EventsHandler handler;
};

QueryService::QueryService(const config::Config& config, const ingest::Router& router, prometheus::Registry* registry)
    : impl_(std::make_unique<Impl>(config, router, registry)) {}
QueryService::~QueryService() = default;

std::optional<query::EventRoute> QueryService::route(std::string_view event_id) const {
  return impl_->lookup(event_id);
}
query::QueryEngine& QueryService::engine() { return impl_->engine; }

void QueryService::mount(server::HttpServer& server) {
  server.get("/v1/events", [this](const server::HttpRequest& request) { return impl_->handler(request); });
}

}  // namespace hbingest::app
