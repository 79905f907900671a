#include "hbingest/daemon/router.h"

#include <stdexcept>

namespace hbingest::daemon {

keyspec::KeySpec build_key_spec(const config::RouteConfig& route) {
  if (route.preset) return keyspec::KeySpec::preset(*route.preset, route.preset_params);
  if (route.key_file) return keyspec::KeySpec::from_yaml_file(*route.key_file);
  if (route.key_yaml) return keyspec::KeySpec::from_yaml_text(*route.key_yaml, route.key_source);
  throw keyspec::SpecError(route.key_source + ": route for table '" + route.table + "' has no key spec");
}

namespace {

std::string qualified(const config::Config& config, const std::string& table) {
  return table.find(':') == std::string::npos ? config.hbase.ns + ":" + table : table;
}

}  // namespace

Router::Router(const config::Config& config) {
  for (const auto& route_config : config.routes) {
    auto route = std::make_shared<Route>(
        Route{qualified(config, route_config.table), route_config.event_types, build_key_spec(route_config)});
    for (const auto& type : route_config.event_types) by_type_.emplace(type, route.get());
    routes_.push_back(std::move(route));
  }
  if (config.default_route) {
    auto route = std::make_shared<Route>(
        Route{qualified(config, config.default_route->table), {}, build_key_spec(*config.default_route)});
    default_route_ = route.get();
    routes_.push_back(std::move(route));
  }
}

const Route* Router::route(std::string_view event_type) const {
  const auto it = by_type_.find(event_type);
  if (it != by_type_.end()) return it->second;
  return default_route_;
}

bool Router::has_explicit_route(std::string_view event_type) const { return by_type_.contains(event_type); }

}  // namespace hbingest::daemon
