#pragma once
// `hbingest query`'s command line, apart from running it (so a test can hold it against
// /v1/events): its request options become the named parameters of the request model shared with
// the HTTP API (hbingest/query/events_request.h), read by the same rules and caps from `query:`.

#include <string>
#include <variant>

#include "hbingest/app/commands.h"
#include "hbingest/config/config.h"
#include "hbingest/query/events_request.h"

namespace hbingest::app {

struct QueryCommandLine {
  std::string config_path;
  // --event-id, --full-table, --from, --to, --limit, --order, --columns as event_id, full_table, ...
  // (each occurrence, so that a repeat is refused by the model as it is over HTTP).
  query::Parameters parameters;
  std::string format = "table";  // table | json | ndjson
  bool serial = false;
};

// The command line, or the exit code when the command stops here (0: help printed; 2: usage error printed).
std::variant<QueryCommandLine, int> parse_query_command_line(const Args& args);

// /v1/events's rules (query.default_limit, query.max_limit) plus the full-table export.
query::RequestRules command_line_rules(const config::QueryConfig& query);

// The option a request parameter comes from: "event_id" → "--event-id".
std::string option_of(const std::string& parameter);

// "--from: <reason>": the model's reason, with the parameter named as the option it came from.
std::string command_line_error(const query::RequestError& error);

}  // namespace hbingest::app
