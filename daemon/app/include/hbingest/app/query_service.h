#pragma once
// The read side assembled from config: a Thrift2 scanner pool of its own (so queries never wait
// behind ingest writes), the n-way QueryEngine, Prometheus query metrics and the /v1/events
// handler. Used by `run` (alongside ingest), `serve` (read-only) and `query` (CLI).
// Thread-safe once built; must outlive the HTTP server it is mounted on.

#include <memory>
#include <optional>

#include "hbingest/config/config.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/routing/route.h"
#include "hbingest/server/events_handler.h"
#include "hbingest/server/http_server.h"
#include "hbingest/server/tls_credentials.h"

namespace prometheus {
class Registry;
}

namespace hbingest::support {
class GatewayShare;
}

namespace hbingest::app {

// The query listener's connection limits from `http`, serving HTTPS when `tls` is set.
server::HttpServerOptions http_server_options(const config::HttpConfig& http,
                                              std::shared_ptr<server::TlsCredentials> tls);
// The same for http.health_listen: its own few workers, so /healthz, /readyz and /metrics answer
// while every worker and queue slot of the query listener is taken.
server::HttpServerOptions health_server_options(const config::HttpConfig& http,
                                                std::shared_ptr<server::TlsCredentials> tls);
// Loaded from http.tls_cert_file/tls_key_file (throws naming the file when unusable); null
// when TLS is not configured.
std::shared_ptr<server::TlsCredentials> http_tls_credentials(const config::HttpConfig& http);
// SIGHUP: re-reads the certificate and key; a failure is logged and the old pair kept.
void reload_http_tls(server::TlsCredentials* tls);
// The token /metrics requires (http.metrics_auth), if any.
std::optional<std::string> metrics_token(const config::HttpConfig& http);

class QueryService {
 public:
  // `registry` may be null (CLI): then no query metrics are recorded. Otherwise it must outlive
  // this service. `gateway_share` (run: shared with the writers; it must outlive this service) has
  // every /v1/events query registered while it runs.
  QueryService(const config::Config& config, const routing::RouteSet& routes, prometheus::Registry* registry,
               support::GatewayShare* gateway_share = nullptr);
  ~QueryService();
  QueryService(const QueryService&) = delete;
  QueryService& operator=(const QueryService&) = delete;

  // Where events of a type live, or nullopt when the type is not routed. Throws query::RequestError
  // when its route writes tables a template makes from event values (no single table to read).
  std::optional<query::EventRoute> route(std::string_view event_id) const;
  query::QueryEngine& engine();
  // GET /v1/events
  void mount(server::HttpServer& server);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::app
