#include "hbingest/ingest/router.h"

namespace hbingest::ingest {

Router::Router(std::vector<Route> routes, std::optional<Route> default_route) {
  for (auto& route : routes) {
    auto shared = std::make_shared<const Route>(std::move(route));
    for (const auto& type : shared->event_types) by_type_.emplace(type, shared.get());
    routes_.push_back(std::move(shared));
  }
  if (default_route) {
    auto shared = std::make_shared<const Route>(std::move(*default_route));
    default_route_ = shared.get();
    routes_.push_back(std::move(shared));
  }
}

const Route* Router::route(std::string_view event_type) const {
  const auto it = by_type_.find(event_type);
  if (it != by_type_.end()) return it->second;
  return default_route_;
}

bool Router::has_explicit_route(std::string_view event_type) const { return by_type_.contains(event_type); }

}  // namespace hbingest::ingest
