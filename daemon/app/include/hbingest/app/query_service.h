#pragma once
// The read side assembled from config: a Thrift2 scanner pool of its own (so queries never wait
// behind ingest writes), the n-way QueryEngine, Prometheus query metrics and the /v1/events
// handler. Used by `run` (alongside ingest), `serve` (read-only) and `query` (CLI).
// Thread-safe once built; must outlive the HTTP server it is mounted on.

#include <memory>
#include <optional>

#include "hbingest/config/config.h"
#include "hbingest/ingest/router.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/server/events_handler.h"
#include "hbingest/server/http_server.h"

namespace prometheus {
class Registry;
}

namespace hbingest::app {

// Handler threads: one per concurrent query, plus two so /healthz and /metrics answer while every
// query slot is busy.
server::HttpServerOptions http_server_options(const config::HttpConfig& http);

class QueryService {
 public:
  // `registry` may be null (CLI): then no query metrics are recorded. Otherwise it must outlive
  // this service.
  QueryService(const config::Config& config, const ingest::Router& router, prometheus::Registry* registry);
  ~QueryService();
  QueryService(const QueryService&) = delete;
  QueryService& operator=(const QueryService&) = delete;

  // Where events of a type live, or nullopt when the type is not routed.
  std::optional<query::EventRoute> route(std::string_view event_id) const;
  query::QueryEngine& engine();
  // GET /v1/events
  void mount(server::HttpServer& server);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::app
