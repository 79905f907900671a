#pragma once
// Event type → destination table and key spec, built once from the config's routes.
// Immutable after construction; safe to share between threads.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::daemon {

struct Route {
  std::string table;  // "ns:table"
  std::vector<std::string> event_types;
  keyspec::KeySpec spec;
};

// Builds the key spec a route names (preset, key file or inline YAML). Throws keyspec::SpecError.
keyspec::KeySpec build_key_spec(const config::RouteConfig& route);

class Router {
 public:
  explicit Router(const config::Config& config);
  // The route for an event type: its own, else the default route (when configured), else null.
  const Route* route(std::string_view event_type) const;
  const std::vector<std::shared_ptr<const Route>>& routes() const { return routes_; }
  bool has_explicit_route(std::string_view event_type) const;

 private:
  std::vector<std::shared_ptr<const Route>> routes_;  // the default route last, if any
  std::map<std::string, const Route*, std::less<>> by_type_;
  const Route* default_route_ = nullptr;
};

}  // namespace hbingest::daemon
