#include "hbingest/routing/route.h"

#include <algorithm>

namespace hbingest::routing {

bool Route::takes_topic(std::string_view topic) const {
  return topics.empty() || std::find(topics.begin(), topics.end(), topic) != topics.end();
}

RouteSet::RouteSet(std::vector<Route> routes, std::optional<Route> default_route) {
  for (auto& route : routes) {
    auto shared = std::make_shared<const Route>(std::move(route));
    for (const auto& type : shared->event_types) by_type_[type].push_back(shared.get());
    routes_.push_back(std::move(shared));
  }
  if (default_route) {
    auto shared = std::make_shared<const Route>(std::move(*default_route));
    default_route_ = shared.get();
    routes_.push_back(std::move(shared));
  }
}

const Route* RouteSet::find(std::string_view topic, std::string_view type) const {
  const auto it = by_type_.find(type);
  if (it == by_type_.end()) return nullptr;
  for (const Route* route : it->second) {
    if (route->takes_topic(topic)) return route;
  }
  return nullptr;
}

const std::vector<const Route*>& RouteSet::routes_of_topic(std::string_view topic) const {
  const std::lock_guard lock(by_topic_mutex_);
  auto it = by_topic_.find(topic);
  if (it == by_topic_.end()) {
    std::vector<const Route*> routes;
    for (const auto& route : routes_) {
      if (route->takes_topic(topic)) routes.push_back(route.get());
    }
    it = by_topic_.emplace(std::string(topic), std::move(routes)).first;
  }
  return it->second;
}

const Route* RouteSet::for_query(std::string_view type) const {
  const auto it = by_type_.find(type);
  if (it != by_type_.end() && !it->second.empty()) return it->second.front();
  return default_route_;
}

}  // namespace hbingest::routing
