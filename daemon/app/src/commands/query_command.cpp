// hbingest query: one n-way scan query from the command line, through the same QueryEngine the
// HTTP server uses.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/query_service.h"
#include "hbingest/app/wiring.h"
#include "hbingest/routing/build_routes.h"
#include "hbingest/config/loader.h"
#include "hbingest/query/columns.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/query/time_arg.h"
#include "hbingest/server/row_json.h"

namespace hbingest::app {

namespace {

std::int64_t time_option(const std::string& name, const std::string& text) {
  try {
    return query::parse_time_arg(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(name + ": " + e.what());
  }
}

// One line per row: time, partition, offset, salt, then the columns.
void print_table_row(const query::ResultRow& row) {
  const auto json = server::row_to_json(row);
  std::string line = json.value("time", std::string("-"));
  line += "  p" + (json.contains("partition") ? json["partition"].dump() : std::string("-"));
  line += "  o" + (json.contains("offset") ? json["offset"].dump() : std::string("-"));
  line += "  s" + (json.contains("salt") ? json["salt"].dump() : std::string("-"));
  for (const auto& [column, value] : json["columns"].items()) {
    line += "  " + column + "=" + server::dump_json(value);
  }
  std::puts(line.c_str());
}

}  // namespace

int query_command(const Args& args) {
  CLI::App cli{
      "Run one n-way scan query (one scan per salt bucket, merged by time) and print the rows.\n"
      "TIME is RFC 3339 (2024-05-01T12:00:00Z) or epoch milliseconds; [from, to) is half-open.",
      "hbingest query"};
  std::string config_path, order = "asc", format = "table";
  std::optional<std::string> event_id, full_table, from, to, columns;
  std::optional<std::size_t> limit;
  bool serial = false;
  cli.add_option("--config", config_path, "config file (YAML)")->required();
  auto* by_event = cli.add_option("--event-id", event_id, "event type to query");
  auto* export_all = cli.add_option("--full-table", full_table, "export the whole table of TYPE's route, in key order");
  by_event->excludes(export_all);
  cli.add_option("--from", from, "range start (inclusive)")->needs(by_event);
  cli.add_option("--to", to, "range end (exclusive)")->needs(by_event);
  cli.add_option("--limit", limit, "at most N rows (0 = no limit; default: query.default_limit)");
  cli.add_option("--order", order, "asc (oldest first) or desc (newest first)")->check(CLI::IsMember({"asc", "desc"}));
  cli.add_option("--format", format, "table, json or ndjson")->check(CLI::IsMember({"table", "json", "ndjson"}));
  cli.add_option("--columns", columns, "comma-separated qualifiers (or family:qualifier)");
  cli.add_flag("--serial", serial, "scan the ranges one after another (to compare with the parallel reader)");
  if (auto exit = parse_command_line(cli, args)) return *exit;
  if (!event_id && !full_table) {
    std::fputs("hbingest query: give --event-id or --full-table\n", stderr);
    return 2;
  }

  const config::Config cfg = config::load_config(config_path);
  const routing::RouteSet routes = routing::build_routes(cfg);
  QueryService service(cfg, routes, nullptr);
  const std::string& type = event_id ? *event_id : *full_table;
  const auto route = service.route(type);
  if (!route) throw std::invalid_argument("event type '" + type + "' has no route in " + cfg.source.string());

  query::Query q;
  q.table = route->table;
  q.spec = route->spec;
  q.order = order == "desc" ? query::Order::desc : query::Order::asc;
  if (event_id) {
    q.event_id = *event_id;
    if (from) q.from_ms = time_option("--from", *from);
    if (to) q.to_ms = time_option("--to", *to);
  } else {
    q.full_table_splits = route->spec->salt_buckets();
    q.merge = query::MergeBy::key;
  }
  q.limit = limit.value_or(cfg.query.default_limit);
  if (columns) {
    try {
      q.columns = query::parse_columns(*columns, *route);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--columns: ") + e.what());
    }
  }

  auto& engine = service.engine();
  const query::QueryOptions options{.deadline = std::nullopt, .serial = serial};

  if (format == "json") {
    nlohmann::json rows = nlohmann::json::array();
    const auto stats =
        engine.stream(q, options, [&](query::ResultRow&& row) { rows.push_back(server::row_to_json(row)); });
    const nlohmann::json doc = {{"rows", std::move(rows)},
                                {"count", stats.rows},
                                {"truncated", stats.truncated},
                                {"scans", stats.scans},
                                {"elapsed_ms", std::chrono::duration<double, std::milli>(stats.elapsed).count()}};
    std::puts(server::dump_json(doc).c_str());
    return 0;
  }
  const auto stats = engine.stream(q, options, [&](query::ResultRow&& row) {
    if (format == "ndjson") {
      std::puts(server::dump_json(server::row_to_json(row)).c_str());
    } else {
      print_table_row(row);
    }
  });
  std::fprintf(stderr, "%zu rows%s from %zu scans (%zu opened) in %.1f ms%s\n", stats.rows,
               stats.truncated ? " (limit reached)" : "", stats.scans, stats.scans_opened,
               std::chrono::duration<double, std::milli>(stats.elapsed).count(), serial ? ", serial" : "");
  return 0;
}

}  // namespace hbingest::app
