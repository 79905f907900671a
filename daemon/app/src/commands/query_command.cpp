// hbingest query: one n-way scan query from the command line, through the same QueryEngine the
// HTTP server uses.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/logging.h"
#include "hbingest/app/query_command_line.h"
#include "hbingest/app/query_service.h"
#include "hbingest/app/wiring.h"
#include "hbingest/config/loader.h"
#include "hbingest/query/events_request.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/routing/build_routes.h"
#include "hbingest/server/row_json.h"

namespace hbingest::app {

namespace {

// One line per row: time, partition, offset, salt, then the columns.
void print_table_row(const query::ResultRow& row, const query::Query& q) {
  const auto json = server::row_to_json(row, q);
  std::string line = json.value("time", std::string("-"));
  line += "  p" + (json.contains("partition") ? json["partition"].dump() : std::string("-"));
  line += "  o" + (json.contains("offset") ? json["offset"].dump() : std::string("-"));
  line += "  s" + (json.contains("salt") ? json["salt"].dump() : std::string("-"));
  for (const auto& [column, value] : json["columns"].items()) {
    line += "  " + column + "=" + server::dump_json(value);
  }
  std::puts(line.c_str());
}

// The request options, named as the model's parameters.
struct RequestOption {
  const char* parameter;
  const char* help;
};
constexpr RequestOption kRequestOptions[] = {
    {"event_id", "event type to query"},
    {"full_table", "export the whole table of TYPE's route, in key order (no row limit unless --limit)"},
    {"from", "range start (inclusive)"},
    {"to", "range end (exclusive)"},
    {"limit", "at most N rows, 1 to query.max_limit (default: query.default_limit)"},
    {"order", "asc (oldest first, default) or desc (newest first)"},
    {"columns", "comma-separated qualifiers (or family:qualifier)"},
};

}  // namespace

std::string option_of(const std::string& parameter) {
  std::string option = "--" + parameter;
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

std::string command_line_error(const query::RequestError& error) {
  return option_of(error.parameter()) + ": " + error.reason();
}

query::RequestRules command_line_rules(const config::QueryConfig& query) {
  return query::RequestRules{
      .default_limit = query.default_limit, .max_limit = query.max_limit, .full_table_export = true};
}

std::variant<QueryCommandLine, int> parse_query_command_line(const Args& args) {
  CLI::App cli{
      "Run one n-way scan query (one scan per salt bucket, merged by time) and print the rows.\n"
      "The options follow the rules of GET /v1/events (docs/query.md).\n"
      "TIME is RFC 3339 (2024-05-01T12:00:00Z) or epoch milliseconds; [from, to) is half-open.",
      "hbingest query"};
  QueryCommandLine line;
  std::vector<std::vector<std::string>> values(std::size(kRequestOptions));
  cli.add_option("--config", line.config_path, "config file (YAML)")->required();
  for (std::size_t i = 0; i < std::size(kRequestOptions); ++i) {
    // Every occurrence is kept: the model refuses a repeat, with the same words as over HTTP.
    cli.add_option(option_of(kRequestOptions[i].parameter), values[i], kRequestOptions[i].help)
        ->allow_extra_args(false);
  }
  cli.add_option("--format", line.format, "table, json or ndjson")->check(CLI::IsMember({"table", "json", "ndjson"}));
  cli.add_flag("--serial", line.serial, "scan the ranges one after another (to compare with the parallel reader)");
  if (auto exit = parse_command_line(cli, args)) return *exit;
  for (std::size_t i = 0; i < std::size(kRequestOptions); ++i) {
    for (auto& value : values[i]) line.parameters.emplace_back(kRequestOptions[i].parameter, std::move(value));
  }
  return line;
}

int query_command(const Args& args) {
  auto parsed = parse_query_command_line(args);
  if (const int* exit = std::get_if<int>(&parsed)) return *exit;
  const auto& line = std::get<QueryCommandLine>(parsed);

  const config::Config cfg = config::load_config(line.config_path);
  query::EventsRequest request;
  try {
    request = query::parse_events_request(line.parameters, command_line_rules(cfg.query));
  } catch (const query::RequestError& e) {
    std::fprintf(stderr, "hbingest query: %s\n", command_line_error(e).c_str());
    return 2;
  }
  const routing::RouteSet routes = routing::build_routes(cfg);
  // Log lines (the Kerberos login's among them) go to stderr: stdout carries the rows.
  setup_logging(cfg.logging);
  const KerberosLogins kerberos_logins(cfg, KerberosLinks{.kafka = false, .hbase = true});
  QueryService service(cfg, routes, nullptr);
  query::Query q;
  try {
    q = query::build_query(request, [&service](std::string_view event_id) { return service.route(event_id); });
  } catch (const query::RequestError& e) {
    std::fprintf(stderr, "hbingest query: %s (config %s)\n", command_line_error(e).c_str(),
                 cfg.source.string().c_str());
    return 2;
  }

  auto& engine = service.engine();
  const query::QueryOptions options{.deadline = std::nullopt, .serial = line.serial};

  if (line.format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    const auto stats =
        engine.stream(q, options, [&](query::ResultRow&& row) { rows.push_back(server::row_to_json(row, q)); });
    const nlohmann::json doc = {{"rows", std::move(rows)},
                                {"count", stats.rows},
                                {"truncated", stats.truncated},
                                {"scans", stats.scans},
                                {"elapsed_ms", std::chrono::duration<double, std::milli>(stats.elapsed).count()}};
    std::puts(server::dump_json(doc).c_str());
    return 0;
  }
  const auto stats = engine.stream(q, options, [&](query::ResultRow&& row) {
    if (line.format == "ndjson") {
      std::puts(server::dump_json(server::row_to_json(row, q)).c_str());
    } else {
      print_table_row(row, q);
    }
  });
  std::fprintf(stderr, "%zu rows%s from %zu scans (%zu opened) in %.1f ms%s\n", stats.rows,
               stats.truncated ? " (limit reached)" : "", stats.scans, stats.scans_opened,
               std::chrono::duration<double, std::milli>(stats.elapsed).count(), line.serial ? ", serial" : "");
  return 0;
}

}  // namespace hbingest::app
