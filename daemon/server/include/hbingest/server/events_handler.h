#pragma once
// EventsHandler: GET /v1/events over the query::QueryEngine.
//
//   /v1/events?event_id=login&from=<RFC 3339|epoch ms>&to=...&limit=N&order=asc|desc&columns=a,d:b
//
// 200: {"rows":[row_to_json...],"count":N,"truncated":bool,"scans":n,"elapsed_ms":x}, or one row per
//      line when the request sends "Accept: application/x-ndjson" (count/truncated/scans then go in
//      X-Hbingest-* headers). Rows are collected before the status line is sent (at most max_limit),
//      so a failure mid-query still gets its own status:
// 400 {"error":...,"parameter":"from"} for bad input; 401 bearer token missing/wrong (when set);
// 429 more than max_concurrent_queries in flight; 503 HBase unreachable (retriable HBaseError);
// 502 other HBase errors; 504 query deadline.
//
// Thread-safe: one instance serves all HTTP worker threads. The engine must outlive it.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <semaphore>
#include <set>
#include <string>
#include <string_view>

#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/server/http_server.h"

namespace hbingest::server {

// event_id → route; nullopt when the event type is not routed (→ 400). Called concurrently.
using RouteLookup = std::function<std::optional<query::EventRoute>(std::string_view event_id)>;

struct EventsHandlerOptions {
  std::size_t default_limit = 1000;
  std::size_t max_limit = 10000;
  int max_concurrent_queries = 8;
  std::optional<std::string> bearer_token{};  // set: required on every request
};

class EventsHandler {
 public:
  EventsHandler(query::QueryEngine& engine, RouteLookup routes, EventsHandlerOptions options);

  HttpResponse operator()(const HttpRequest& request);

 private:
  HttpResponse run(const HttpRequest& request);

  query::QueryEngine& engine_;
  RouteLookup routes_;
  EventsHandlerOptions options_;
  std::counting_semaphore<> slots_;  // free query slots; try-acquired, never waited on
};

}  // namespace hbingest::server
