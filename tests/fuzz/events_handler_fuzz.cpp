// libFuzzer target: GET /v1/events query parameters → EventsHandler, no sockets.
// Input: a query string "name=value&name=value..." (already decoded, any bytes); an input starting
// with '!' also sends "Accept: application/x-ndjson". The handler runs over a QueryEngine whose
// scanners return no rows, so what is exercised is the request model (query::parse_events_request:
// event_id, from/to, limit, order, columns; query::build_query: the route, columns, planning).
// Properties: nothing crashes or throws; every answer is 200 or 400 with a JSON body, and a 400 names
// the offending parameter.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/connectors/scanner.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/server/events_handler.h"

namespace {

using namespace hbingest;

void check(bool ok) {
  if (!ok) std::abort();
}

class EmptyScanner final : public connectors::RowScanner {
 public:
  std::vector<connectors::ScannedRow> next_chunk() override { return {}; }
  bool exhausted() const override { return true; }
  void close() noexcept override {}
};

class EmptyScannerFactory final : public connectors::ScannerFactory {
 public:
  std::unique_ptr<connectors::RowScanner> open(const connectors::ScanRequest&) override {
    return std::make_unique<EmptyScanner>();
  }
};

server::HttpRequest request_of(std::string_view input) {
  server::HttpRequest request;
  request.path = "/v1/events";
  request.remote_addr = "127.0.0.1";
  if (!input.empty() && input.front() == '!') {
    request.headers["accept"] = "application/x-ndjson";
    input.remove_prefix(1);
  }
  while (!input.empty()) {
    const auto amp = input.find('&');
    const std::string_view item = input.substr(0, amp);
    input = amp == std::string_view::npos ? std::string_view{} : input.substr(amp + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      request.params.emplace_back(std::string(item), "");
    } else {
      request.params.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  }
  return request;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static EmptyScannerFactory factory;
  static query::QueryEngine engine(factory,
                                   query::EngineOptions{.concurrency = 2, .deadline = std::chrono::seconds(5)});
  static const auto events = std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset("events"));
  static const auto logs = std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset("logs"));
  static server::EventsHandler handler(
      engine,
      [](std::string_view event_id) -> std::optional<query::EventRoute> {
        if (event_id == "login" || event_id == "order") {
          return query::EventRoute{.table = "events",
                                   .spec = events,
                                   .family = "d",
                                   .known_qualifiers = std::set<std::string>{"event_id", "user", "ts"}};
        }
        if (event_id.starts_with("log")) return query::EventRoute{.table = "logs", .spec = logs};
        return std::nullopt;
      },
      server::EventsHandlerOptions{.default_limit = 100, .max_limit = 1000, .max_concurrent_queries = 1});

  const auto request = request_of(std::string_view(reinterpret_cast<const char*>(data), size));
  const server::HttpResponse response = handler(request);
  check(response.status == 200 || response.status == 400);
  if (response.content_type == "application/x-ndjson") {
    check(response.status == 200 && response.body.empty());
    return 0;
  }
  const auto body = nlohmann::json::parse(response.body);  // throws (and so fails) on invalid JSON
  if (response.status == 400) {
    check(!body.at("error").get<std::string>().empty());
    check(body.at("parameter").is_string());  // "" for a parameter with an empty name
  } else {
    check(body.at("rows").empty() && body.at("count") == 0);
  }
  return 0;
}
