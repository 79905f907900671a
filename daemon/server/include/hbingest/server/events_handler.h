#pragma once
// EventsHandler: GET /v1/events over the query::QueryEngine.
//
//   /v1/events?event_id=login&from=<RFC 3339|epoch ms>&to=...&limit=N&order=asc|desc&columns=a,d:b
//
// The parameters are read by the request model shared with `hbingest query`
// (hbingest/query/events_request.h; no full_table here).
//
// 200: {"rows":[row_to_json...],"count":N,"truncated":bool,"truncated_by":"limit"|"max_response_bytes"|null,
//      "scans":n,"elapsed_ms":x} (rows first, the totals after them), or one row per line when the
//      request sends "Accept: application/x-ndjson".
//
// The response is streamed: the query runs on a thread of its own and its rendered rows reach the
// client in chunks through a bounded buffer, so memory does not grow with the result. The first
// `stream_after_bytes` are held back: a query that ends (or fails) within them gets a plain
// response with its own status and, for NDJSON, X-Hbingest-Count/-Truncated/-Scans headers:
// 400 {"error":"parameter 'from': <reason>","parameter":"from"} for bad input; 401 bearer token missing/wrong (when
// set); 429 (Retry-After: 1) when max_concurrent_queries are in flight and none ends within a second; 503 HBase
// unreachable (retriable HBaseError); 502 other HBase errors; 504 query deadline. Past them the status line (200) has
// gone out, so a later failure ends the body with the error instead, keeping it parseable:
//   JSON    ...],"count":N,"truncated":true,"truncated_by":"error","error":"...","status":504,...}
//   NDJSON  a last line {"error":"...","status":504,"count":N}
// A body reaching `max_response_bytes` stops the query and ends cleanly with a marker:
//   JSON    "truncated":true,"truncated_by":"max_response_bytes"
//   NDJSON  a last line {"truncated":true,"truncated_by":"max_response_bytes","count":N}
// (a streamed NDJSON body cut by the row limit ends with {"truncated":true,"truncated_by":"limit",...}
// too, since its headers went out before the count was known).
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
#include "hbingest/query/events_request.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/server/http_server.h"

namespace hbingest::support {
class GatewayShare;
}

namespace hbingest::server {

// event_id → route; nullopt when the event type is not routed (→ 400). Called concurrently.
using RouteLookup = query::RouteLookup;

struct EventsHandlerOptions {
  std::size_t default_limit = 1000;
  std::size_t max_limit = 10000;
  int max_concurrent_queries = 8;
  std::optional<std::string> bearer_token{};          // set: required on every request
  std::size_t max_response_bytes = 16 * 1024 * 1024;  // body size at which a response is cut
  std::size_t stream_after_bytes = 64 * 1024;         // held back before the status line
  // Set (it must outlive the handler): each query is registered in it while it runs, so that the
  // daemon's writers leave the gateways to its scans meanwhile.
  support::GatewayShare* gateway_share = nullptr;
};

class EventsHandler {
 public:
  EventsHandler(query::QueryEngine& engine, RouteLookup routes, EventsHandlerOptions options);

  HttpResponse operator()(const HttpRequest& request);
  // The query a request asks for, as operator() runs it. Throws query::RequestError (→ 400).
  query::Query query_for(const HttpRequest& request) const;

 private:
  HttpResponse run(const HttpRequest& request);
  // Takes a query slot, waiting up to kAdmissionWait for one when a waiting place is free; the
  // reason of the refusal otherwise.
  std::optional<std::string> admit();

  query::QueryEngine& engine_;
  RouteLookup routes_;
  EventsHandlerOptions options_;
  query::RequestRules rules_;
  std::counting_semaphore<> slots_;  // free query slots; waited on for at most kAdmissionWait
  // Requests allowed to wait for a slot: each waits on an HTTP worker, and unbounded waiters would
  // take every worker (health and metrics included) from a burst of queries. Half the slots.
  std::counting_semaphore<> waiting_places_;
};

}  // namespace hbingest::server
