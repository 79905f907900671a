#pragma once
// The route model (docs/rows.md): one declarative thing that says which records a route takes
// (topics, event types), where their rows go (a table or a template), how their keys are made (the
// key spec) and their cells (the row mapping), and what a tombstone does. Every command uses it:
// `run` writes by it, `serve` and `query` read by it, `bootstrap` creates its tables, `check-config`
// explains it. Built once from the configuration (build_routes.h); immutable, shared by threads.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/row_mapping.h"
#include "hbingest/routing/table_template.h"

namespace hbingest::routing {

struct Route {
  std::string name;                      // "routes[2]", "default_route", or its configured name
  std::vector<std::string> topics;       // empty: every subscribed topic
  std::vector<std::string> event_types;  // empty: the default route
  TableTemplate table;
  std::size_t max_tables = 100;  // distinct tables its template may make at run time
  std::shared_ptr<const keyspec::KeySpec> key;
  RowMapping columns;
  config::OnTombstone on_tombstone = config::OnTombstone::dlq;
  std::string source;  // "config.yaml:42": where the route is configured
  // How its topics' values are written (its `format`, else the one decode.topic_formats gives all
  // its topics, else decode.format): what a packed cell holds, for queries to read back.
  config::EventFormat format = config::EventFormat::json;

  bool takes_topic(std::string_view topic) const;
};

class RouteSet {
 public:
  RouteSet(std::vector<Route> routes, std::optional<Route> default_route);

  // The route of an event of `type` read from `topic`: the first route naming the type that takes
  // the topic, else null (see default_route()).
  const Route* find(std::string_view topic, std::string_view type) const;
  // Where events of types no route names go (dlq.unknown_type: default_route), if configured.
  const Route* default_route() const { return default_route_; }
  // The routes a tombstone of `topic` concerns: every route taking the topic (a tombstone has no
  // event type), the default route included.
  const std::vector<const Route*>& routes_of_topic(std::string_view topic) const;
  // What a query of `type` reads: the first route naming it (whatever its topics), else the
  // default route; null when neither.
  const Route* for_query(std::string_view type) const;
  // Every route, the default route last.
  const std::vector<std::shared_ptr<const Route>>& all() const { return routes_; }

 private:
  std::vector<std::shared_ptr<const Route>> routes_;
  std::map<std::string, std::vector<const Route*>, std::less<>> by_type_;
  const Route* default_route_ = nullptr;
  // Filled on first ask of each topic; bounded by the topics the subscription delivers.
  mutable std::map<std::string, std::vector<const Route*>, std::less<>> by_topic_;
  mutable std::mutex by_topic_mutex_;
};

}  // namespace hbingest::routing
