// QueryService's route lookup: what a query reads of the route model.

#include "hbingest/app/query_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hbingest/config/loader.h"
#include "hbingest/query/events_request.h"
#include "hbingest/routing/build_routes.h"

namespace hbingest::app {
namespace {

using ::testing::HasSubstr;

config::Config load(const std::string& routes) {
  auto loaded = config::try_load_config_text(
      "kafka: {bootstrap_servers: '127.0.0.1:1', topics: [orders]}\nhbase: {endpoints: ['127.0.0.1:1']}\nroutes:\n" +
          routes,
      "test.yaml");
  if (!loaded.problems.empty()) throw std::runtime_error(loaded.problems.front());
  return loaded.config;
}

TEST(QueryServiceRoutes, ATemplateOverTheEventTypeNamesTheTableOfAQuery) {
  const auto config = load("  - {event_types: [order], table: 'e_${event_type}', preset: events}\n");
  const auto routes = routing::build_routes(config);
  const QueryService service(config, routes, nullptr);
  const auto route = service.route("order");
  ASSERT_TRUE(route);
  EXPECT_EQ(route->table, "default:e_order");
  EXPECT_FALSE(service.route("refund")) << "not routed";
}

TEST(QueryServiceRoutes, ATemplateOverEventValuesIsRefusedSayingWhy) {
  const auto config = load(
      "  - {event_types: [order], table: 'e_${field:region}', table_values: {'field:region': [eu, us]},\n"
      "     preset: events}\n");
  const auto routes = routing::build_routes(config);
  const QueryService service(config, routes, nullptr);
  try {
    (void)service.route("order");
    FAIL() << "a query cannot name one of the route's tables";
  } catch (const query::RequestError& e) {
    EXPECT_EQ(e.parameter(), "event_id");
    EXPECT_THAT(e.what(), HasSubstr("one per value of the template"));
  }
}

}  // namespace
}  // namespace hbingest::app
