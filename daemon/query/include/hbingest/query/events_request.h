#pragma once
// The request model of a query, shared by GET /v1/events and `hbingest query`: named parameters →
// EventsRequest (parse_events_request, no route needed) → Query (build_query, the one place that
// looks the event type's route up and reads it). Both front ends give the same parameters the same
// rules, defaults, caps and error texts; only how they name a parameter in an error differs
// (HTTP: `parameter 'from': <reason>` with "parameter":"from"; CLI: `--from: <reason>`).
//
// Parameters (each at most once):
//   event_id    the event type; required unless full_table is given
//   full_table  TYPE: every row of TYPE's route's table, in key order (export; only where
//               RequestRules::full_table_export allows it, i.e. the CLI). Takes no event_id, from, to.
//   from, to    [from, to) in epoch milliseconds or RFC 3339; either may be left open; from < to
//   limit       1..max_limit rows (default: default_limit; a full-table export without it: every row)
//   order       asc (default) | desc
//   columns     comma-separated qualifiers or family:qualifier of the route's family, at most
//               kMaxColumns; repeats are asked for once; empty or absent: every column
// Pure functions, safe from any thread.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hbingest/query/query.h"

namespace hbingest::query {

// A query's parameters by name, in the order given (the HTTP query string, decoded; the CLI's options).
using Parameters = std::vector<std::pair<std::string, std::string>>;

// event_id → where its events live; nullopt when no route serves it. Called concurrently.
using RouteLookup = std::function<std::optional<EventRoute>(std::string_view event_id)>;

// A parameter with a value the model refuses.
class RequestError : public std::invalid_argument {
 public:
  // what(): "parameter '<parameter>': <reason>".
  RequestError(std::string parameter, std::string reason);
  const std::string& parameter() const noexcept { return parameter_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string parameter_;
  std::string reason_;
};

// What the front end allows; the limits come from config::QueryConfig.
struct RequestRules {
  std::size_t default_limit = 1000;
  std::size_t max_limit = 10000;
  bool full_table_export = false;  // accept `full_table` (the CLI); /v1/events does not
};

// Columns a request may name: each is one more column in every scan of the query (n per query),
// and no event has more fields than this is meant for.
inline constexpr std::size_t kMaxColumns = 1024;

// One item of `columns` as given: a qualifier, or family:qualifier.
struct ColumnName {
  std::optional<std::string> family{};
  std::string qualifier{};
  bool operator==(const ColumnName&) const = default;
};

struct EventsRequest {
  // The event type asked for; for a full-table export, the type whose route names the table.
  std::string event_id{};
  bool full_table = false;
  std::optional<std::int64_t> from_ms{};  // inclusive
  std::optional<std::int64_t> to_ms{};    // exclusive
  std::size_t limit = 0;                  // 0 only for a full-table export without a limit: every row
  Order order = Order::asc;
  std::vector<ColumnName> columns{};  // as given; checked against the route by build_query
  bool operator==(const EventsRequest&) const = default;
};

// Checks every parameter that needs no route. Throws RequestError naming the first bad one:
// unknown names and repeats first (in the order given), then event_id/full_table, from, to, limit,
// order, columns.
EventsRequest parse_events_request(const Parameters& parameters, const RequestRules& rules);

// The Query for a request: looks its event type up in `routes` (the only read of a route), checks
// the columns against the route's family and known qualifiers, and plans it once so that a spec's
// refusal is a RequestError too. Throws RequestError ("event_id" for an unknown or unplannable type,
// "full_table" for an export, "columns").
Query build_query(const EventsRequest& request, const RouteLookup& routes);

}  // namespace hbingest::query
