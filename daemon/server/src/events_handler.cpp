#include "hbingest/server/events_handler.h"

#include "hbingest/query/columns.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/query/time_arg.h"
#include "hbingest/server/bearer_auth.h"
#include "hbingest/server/row_json.h"

namespace hbingest::server {

namespace {

constexpr std::string_view kNdjson = "application/x-ndjson";
constexpr std::string_view kKnownParams[] = {"event_id", "from", "to", "limit", "order", "columns"};

// Bad input, naming the offending parameter.
class BadParameter : public std::invalid_argument {
 public:
  BadParameter(std::string parameter, const std::string& message)
      : std::invalid_argument(message), parameter_(std::move(parameter)) {}
  const std::string& parameter() const noexcept { return parameter_; }

 private:
  std::string parameter_;
};

HttpResponse json_response(int status, const nlohmann::json& body) {
  HttpResponse res;
  res.status = status;
  res.body = dump_json(body);
  return res;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, {{"error", message}});
}

std::optional<std::string> single_param(const HttpRequest& request, std::string_view name) {
  std::optional<std::string> value;
  for (const auto& [key, v] : request.params) {
    if (key != name) continue;
    if (value) throw BadParameter(std::string(name), "parameter '" + std::string(name) + "' given more than once");
    value = v;
  }
  return value;
}

std::optional<std::int64_t> time_param(const HttpRequest& request, std::string_view name) {
  const auto text = single_param(request, name);
  if (!text) return std::nullopt;
  try {
    return query::parse_time_arg(*text);
  } catch (const std::invalid_argument& e) {
    throw BadParameter(std::string(name), "bad time in '" + std::string(name) + "': " + e.what());
  }
}

std::size_t limit_param(const HttpRequest& request, const EventsHandlerOptions& options) {
  const auto text = single_param(request, "limit");
  if (!text) return options.default_limit;
  std::size_t limit = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), limit);
  if (ec != std::errc{} || end != text->data() + text->size() || limit == 0) {
    throw BadParameter("limit", "limit '" + *text + "' is not a positive integer");
  }
  if (limit > options.max_limit) {
    throw BadParameter("limit", "limit " + *text + " is over the maximum of " + std::to_string(options.max_limit));
  }
  return limit;
}

query::Order order_param(const HttpRequest& request) {
  const auto text = single_param(request, "order");
  if (!text || *text == "asc") return query::Order::asc;
  if (*text == "desc") return query::Order::desc;
  throw BadParameter("order", "order '" + *text + "' must be asc or desc");
}

std::vector<std::string> columns_param(const HttpRequest& request, const query::EventRoute& route) {
  const auto text = single_param(request, "columns");
  if (!text) return {};
  try {
    return query::parse_columns(*text, route);
  } catch (const std::invalid_argument& e) {
    throw BadParameter("columns", e.what());
  }
}

bool wants_ndjson(const HttpRequest& request) {
  const auto accept = request.header("accept");
  return accept && accept->find(kNdjson) != std::string::npos;
}

// Releases a query slot on every path.
class SlotGuard {
 public:
  explicit SlotGuard(std::counting_semaphore<>& slots) : slots_(slots) {}
  ~SlotGuard() { slots_.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  std::counting_semaphore<>& slots_;
};

}  // namespace

EventsHandler::EventsHandler(query::QueryEngine& engine, RouteLookup routes, EventsHandlerOptions options)
    : engine_(engine),
      routes_(std::move(routes)),
      options_(std::move(options)),
      slots_(std::max(0, options_.max_concurrent_queries)) {}

HttpResponse EventsHandler::operator()(const HttpRequest& request) {
  if (options_.bearer_token && !server::bearer_token_matches(request, *options_.bearer_token)) {
    return server::unauthorized_response();
  }
  try {
    return run(request);
  } catch (const BadParameter& e) {
    return json_response(400, {{"error", e.what()}, {"parameter", e.parameter()}});
  }
}

HttpResponse EventsHandler::run(const HttpRequest& request) {
  for (const auto& [name, value] : request.params) {
    if (std::find(std::begin(kKnownParams), std::end(kKnownParams), name) == std::end(kKnownParams)) {
      throw BadParameter(name, "unknown parameter '" + name + "'");
    }
  }
  const auto event_id = single_param(request, "event_id");
  if (!event_id || event_id->empty()) throw BadParameter("event_id", "event_id is required");
  const auto route = routes_(*event_id);
  if (!route) throw BadParameter("event_id", "unknown event_id '" + *event_id + "': no route serves it");

  query::Query events_query;
  events_query.table = route->table;
  events_query.spec = route->spec;
  events_query.event_id = *event_id;
  events_query.from_ms = time_param(request, "from");
  events_query.to_ms = time_param(request, "to");
  if (events_query.from_ms && events_query.to_ms && *events_query.from_ms >= *events_query.to_ms) {
    throw BadParameter("from", "from must be before to");
  }
  events_query.limit = limit_param(request, options_);
  events_query.order = order_param(request);
  events_query.columns = columns_param(request, *route);

  // Planning is pure and cheap: doing it here turns a spec's refusal (e.g. an event type its dict
  // does not know) into a 400 before any query slot or scanner is taken.
  try {
    engine_.plan(events_query);
  } catch (const keyspec::SpecError& e) {
    throw BadParameter("event_id", std::string("cannot plan the query: ") + e.what());
  } catch (const query::QueryError& e) {
    throw BadParameter("event_id", std::string("cannot plan the query: ") + e.what());
  }

  if (!slots_.try_acquire()) {
    auto res = error_response(
        429, "too many concurrent queries (max " + std::to_string(options_.max_concurrent_queries) + ")");
    res.headers.emplace_back("Retry-After", "1");
    return res;
  }
  const SlotGuard slot(slots_);

  const bool ndjson = wants_ndjson(request);
  std::string lines;
  nlohmann::json rows = nlohmann::json::array();
  query::QueryStats stats;
  try {
    stats = engine_.stream(events_query, {}, [&](query::ResultRow&& row) {
      if (ndjson) {
        lines += dump_json(row_to_json(row));
        lines += '\n';
      } else {
        rows.push_back(row_to_json(row));
      }
    });
  } catch (const query::QueryTimeout& e) {
    return error_response(504, e.what());
  } catch (const connectors::HBaseError& e) {
    auto res = error_response(e.retriable() ? 503 : 502,
                              std::string("hbase ") + e.operation() + " on " + e.endpoint() + ": " + e.what());
    if (e.retriable()) res.headers.emplace_back("Retry-After", "1");
    return res;
  }

  const double elapsed_ms = std::chrono::duration<double, std::milli>(stats.elapsed).count();
  if (ndjson) {
    HttpResponse res;
    res.content_type = std::string(kNdjson);
    res.body = std::move(lines);
    res.headers.emplace_back("X-Hbingest-Count", std::to_string(stats.rows));
    res.headers.emplace_back("X-Hbingest-Truncated", stats.truncated ? "true" : "false");
    res.headers.emplace_back("X-Hbingest-Scans", std::to_string(stats.scans));
    return res;
  }
  return json_response(200, {{"rows", std::move(rows)},
                             {"count", stats.rows},
                             {"truncated", stats.truncated},
                             {"scans", stats.scans},
                             {"elapsed_ms", elapsed_ms}});
}

}  // namespace hbingest::server
