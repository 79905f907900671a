// /metrics, /healthz and /readyz over the real HttpServer on an ephemeral port.

#include "hbingest/server/service_endpoints.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <prometheus/counter.h>

#include <atomic>
#include <memory>

namespace hbingest::server {
namespace {

TEST(ServiceEndpoints, MetricsServesTheRegistryAndScrapeTimeValues) {
  prometheus::Registry registry;
  register_build_info(registry, "1.2.3");
  prometheus::BuildCounter()
      .Name("hbingest_test_total")
      .Help("A counter.")
      .Register(registry)
      .Add({{"reason", "bad \"json\"\nat C:\\x"}})
      .Increment(3);
  std::atomic<bool> ready{false};
  auto gauge = std::make_shared<ReadinessGauge>([&ready] { return Readiness{ready.load(), {}}; });
  HttpServer server(HttpServerOptions{.listen = "127.0.0.1:0", .workers = 2});
  mount_service_endpoints(server, registry, {gauge}, [&ready] { return Readiness{ready.load(), {"not yet"}}; });
  server.start();
  httplib::Client client("127.0.0.1", server.port());

  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), kMetricsContentType);
  EXPECT_NE(res->body.find("# TYPE hbingest_build_info gauge\nhbingest_build_info{version=\"1.2.3\"} 1\n"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find(R"(hbingest_test_total{reason="bad \"json\"\nat C:\\x"} 3)"), std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find("# TYPE hbingest_ready gauge\nhbingest_ready 0\n"), std::string::npos) << res->body;
  EXPECT_EQ(client.Get("/readyz")->status, 503);

  ready = true;
  res = client.Get("/metrics");
  EXPECT_NE(res->body.find("\nhbingest_ready 1\n"), std::string::npos) << res->body;
  EXPECT_EQ(client.Get("/readyz")->status, 200);
  EXPECT_EQ(client.Get("/healthz")->status, 200);

  // The owner let go of the gauge: the endpoint skips it (it only held a weak_ptr).
  gauge.reset();
  res = client.Get("/metrics");
  EXPECT_EQ(res->body.find("hbingest_ready"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("hbingest_build_info"), std::string::npos) << res->body;
  server.stop();
}

TEST(ServiceEndpoints, MetricsBehindTheTokenWhenAskedProbesNever) {
  prometheus::Registry registry;
  register_build_info(registry, "1.2.3");
  HttpServer server(HttpServerOptions{.listen = "127.0.0.1:0", .workers = 2});
  mount_service_endpoints(
      server, registry, {}, [] { return Readiness{}; }, std::string("tok"));
  server.start();
  httplib::Client client("127.0.0.1", server.port());
  EXPECT_EQ(client.Get("/metrics")->status, 401);
  EXPECT_EQ(client.Get("/metrics", {{"Authorization", "Bearer nope"}})->status, 401);
  EXPECT_EQ(client.Get("/metrics", {{"Authorization", "Bearer tok"}})->status, 200);
  EXPECT_EQ(client.Get("/healthz")->status, 200);
  EXPECT_EQ(client.Get("/readyz")->status, 200);
}

}  // namespace
}  // namespace hbingest::server
