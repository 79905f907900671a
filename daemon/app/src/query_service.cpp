#include "hbingest/app/query_service.h"

#include <set>

#include "hbingest/app/wiring.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "query_metrics.h"

namespace hbingest::app {

namespace {

// Only the raw mode has a fixed set of qualifiers; field columns are whatever the events carry.
std::optional<std::set<std::string>> known_qualifiers(const config::DecodeConfig& decode) {
  if (decode.columns == config::ColumnsMode::raw) return std::set<std::string>{decode.raw_qualifier};
  return std::nullopt;
}

}  // namespace

server::HttpServerOptions http_server_options(const config::HttpConfig& http) {
  return server::HttpServerOptions{http.listen, http.max_concurrent_queries + 2};
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
            server::EventsHandlerOptions{config.query.default_limit, config.query.max_limit,
                                         config.http.max_concurrent_queries, config.http.bearer_token}) {
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
