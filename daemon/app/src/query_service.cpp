#include "hbingest/app/query_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "hbingest/app/wiring.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/event_formats/format_factory.h"
#include "hbingest/query/events_request.h"
#include "packed_cell_reader.h"
#include "query_metrics.h"

namespace hbingest::app {

namespace {

constexpr int kHealthWorkers = 4;
constexpr int kHealthQueue = 16;
constexpr std::chrono::milliseconds kHealthKeepAlive{2000};

// The qualifiers of `family` a mapping fixes; nullopt when it writes whatever the events carry.
std::optional<std::set<std::string>> known_qualifiers(const routing::RowMapping& mapping, const std::string& family) {
  const auto columns = mapping.known_qualifiers();
  if (!columns) return std::nullopt;
  std::set<std::string> qualifiers;
  for (const auto& column : *columns) {
    if (column.starts_with(family + ":")) qualifiers.insert(column.substr(family.size() + 1));
  }
  return qualifiers;
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
  Impl(const config::Config& config, const routing::RouteSet& routes_ref, prometheus::Registry* registry,
       support::GatewayShare* gateway_share)
      : routes(routes_ref),
        schema_registry(config.schema_registry.url
                            ? connectors::make_http_schema_registry(schema_registry_options(config.schema_registry))
                            : nullptr),
        packed_readers(make_packed_readers(config, routes_ref, schema_registry.get())),
        scanners(connectors::make_thrift2_scanner_factory(thrift2_options(config.hbase), config.query.concurrency)),
        observer(registry ? std::make_unique<QueryMetrics>(*registry) : nullptr),
        engine(*scanners, engine_options(config.query), observer.get()),
        handler(
            engine, [this](std::string_view id) { return lookup(id); },
            server::EventsHandlerOptions{.default_limit = config.query.default_limit,
                                         .max_limit = config.query.max_limit,
                                         .max_concurrent_queries = config.http.max_concurrent_queries,
                                         .bearer_token = config.http.bearer_token,
                                         .max_response_bytes = config.http.max_response_bytes,
                                         .gateway_share = gateway_share}) {}

  std::optional<query::EventRoute> lookup(std::string_view event_id) const {
    const routing::Route* route = routes.for_query(event_id);  // falls back to the default route
    if (route == nullptr) return std::nullopt;
    // A template over the event type (or the route's one topic) names the table of a query; one
    // over the value's fields cannot: its events are in several tables.
    const auto table = route->table.resolve(
        {route->topics.size() == 1 ? std::string_view(route->topics.front()) : std::string_view(), event_id, nullptr});
    if (!table.reason.empty()) {
      // Routed, but to tables the event's values choose: no single table holds its events.
      throw query::RequestError("event_id", "events of type '" + std::string(event_id).substr(0, 64) + "' go to " +
                                                route->name + "'s tables '" + route->table.text() +
                                                "', one per value of the template: a query reads one table, and "
                                                "this type has no single one (" +
                                                table.reason + ")");
    }
    const std::string& family = route->columns.families().front();
    return query::EventRoute{
        table.table, route->key, family, known_qualifiers(route->columns, family),
        // Not owning: the route set outlives this service (see its constructor).
        std::shared_ptr<const routing::RowMapping>(std::shared_ptr<const routing::RowMapping>(), &route->columns),
        packed_reader(route)};
  }

  // The packed cell of each route that writes one, read back by the route's format (its schemas
  // from the registry when it is Avro, Protobuf or JSON Schema).
  static std::map<const routing::Route*, std::shared_ptr<const query::PackedCellReader>> make_packed_readers(
      const config::Config& config, const routing::RouteSet& routes, connectors::SchemaRegistry* registry) {
    std::map<const routing::Route*, std::shared_ptr<const query::PackedCellReader>> readers;
    for (const auto& route : routes.all()) {
      const auto column = route->columns.packed_column();
      if (!column) continue;
      if (event_formats::needs_schema_registry(route->format) && registry == nullptr) continue;
      readers.emplace(route.get(), std::make_shared<PackedValueReader>(
                                       column->first, column->second, route->format, registry,
                                       event_formats::SchemaCacheLimits{config.schema_registry.cache_max_schemas,
                                                                        config.schema_registry.cache_max_bytes}));
    }
    return readers;
  }

  std::shared_ptr<const query::PackedCellReader> packed_reader(const routing::Route* route) const {
    const auto it = packed_readers.find(route);
    return it == packed_readers.end() ? nullptr : it->second;
  }

  const routing::RouteSet& routes;
  std::unique_ptr<connectors::SchemaRegistry> schema_registry;  // null without schema_registry.url
  std::map<const routing::Route*, std::shared_ptr<const query::PackedCellReader>> packed_readers;
  // Destruction order matters: the handler uses the engine, the engine the scanner pool.
  std::unique_ptr<connectors::Thrift2ScannerFactory> scanners;
  std::unique_ptr<QueryMetrics> observer;
  query::QueryEngine engine;
  server::EventsHandler handler;
};

QueryService::QueryService(const config::Config& config, const routing::RouteSet& routes,
                           prometheus::Registry* registry, support::GatewayShare* gateway_share)
    : impl_(std::make_unique<Impl>(config, routes, registry, gateway_share)) {}
QueryService::~QueryService() = default;

std::optional<query::EventRoute> QueryService::route(std::string_view event_id) const {
  return impl_->lookup(event_id);
}
query::QueryEngine& QueryService::engine() { return impl_->engine; }

void QueryService::mount(server::HttpServer& server) {
  server.get("/v1/events", [this](const server::HttpRequest& request) { return impl_->handler(request); });
}

}  // namespace hbingest::app
