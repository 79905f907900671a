#pragma once
// Event type → destination table and key spec (hbingest::app builds the routes from the config).
// Immutable after construction; safe to share between threads.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <optional>
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::ingest {

struct Route {
  std::string table;  // "ns:table"
  std::vector<std::string> event_types;
  keyspec::KeySpec spec;
};

class Router {
 public:
  // `routes` by event type; `default_route` serves every other type when set.
  Router(std::vector<Route> routes, std::optional<Route> default_route);
  // The route for an event type: its own, else the default route (when configured), else null.
  const Route* route(std::string_view event_type) const;
  const std::vector<std::shared_ptr<const Route>>& routes() const { return routes_; }
  bool has_explicit_route(std::string_view event_type) const;

 private:
  std::vector<std::shared_ptr<const Route>> routes_;  // the default route last, if any
  std::map<std::string, const Route*, std::less<>> by_type_;
  const Route* default_route_ = nullptr;
};

}  // namespace hbingest::ingest
