#pragma once
// The routes of a configuration, built the same way by every command (`run`, `serve`, `query`,
// `bootstrap`, `check-config`): key specs, table templates, row mappings, and every rule that ties
// them together (a delete needs a key without value fields, one format per topic...).

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/route.h"

namespace hbingest::routing {

// Everything wrong with the routes, one line per problem, each naming its config line and route.
class RouteError : public std::runtime_error {
 public:
  explicit RouteError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const noexcept { return *problems_; }

 private:
  std::shared_ptr<const std::vector<std::string>> problems_;
};

// Throws RouteError. `warnings` (when given) receives what loads but deserves a look: key specs'
// own warnings, keys not unique per record by design.
RouteSet build_routes(const config::Config& config, std::vector<std::string>* warnings = nullptr);

// The key spec of one route (preset, key file or inline `key:`). `name` is the route's place in
// the config ("routes[2]", "default_route"). Throws keyspec::SpecError with every problem of the
// spec, each as "<key_source>: <name>.key: <problem>".
keyspec::KeySpec build_key_spec(const config::Config& config, const config::RouteConfig& route, std::string_view name);

// Whether some route reads the decoded Kafka key (key, key.PATH in a key spec, a column or a
// template): the decoder then decodes keys with values, and a key that does not decode is invalid.
bool reads_decoded_key(const RouteSet& routes);

// Topic → input format: decode.topic_formats and the routes' `format` (build_routes checks they agree).
std::map<std::string, std::string, std::less<>> topic_formats(const config::Config& config);

}  // namespace hbingest::routing
