#include "hbingest/server/service_endpoints.h"

#include "hbingest/server/bearer_auth.h"

#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <nlohmann/json.hpp>

namespace hbingest::server {

void register_build_info(prometheus::Registry& registry, std::string_view version) {
  prometheus::BuildGauge()
      .Name("hbingest_build_info")
      .Help("Build information; always 1.")
      .Register(registry)
      .Add({{"version", std::string(version)}})
      .Set(1);
}

ReadinessGauge::ReadinessGauge(std::function<Readiness()> readiness) : readiness_(std::move(readiness)) {}

std::vector<prometheus::MetricFamily> ReadinessGauge::Collect() const {
  prometheus::ClientMetric metric;
  metric.gauge.value = readiness_().ready ? 1.0 : 0.0;
  prometheus::MetricFamily family;
  family.name = "hbingest_ready";
  family.help = "1 when /readyz answers ready, else 0.";
  family.type = prometheus::MetricType::Gauge;
  family.metric.push_back(std::move(metric));
  return {std::move(family)};
}

std::string metrics_text(const prometheus::Registry& registry, const ScrapeTimeMetrics& scrape_time) {
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (const auto& weak : scrape_time) {
    const auto collectable = weak.lock();  // held while it collects: see ReadinessGauge
    if (!collectable) continue;
    auto more = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer{}.Serialize(families);
}

void mount_service_endpoints(HttpServer& server, const prometheus::Registry& registry, ScrapeTimeMetrics scrape_time,
                             std::function<Readiness()> readiness, std::optional<std::string> metrics_token) {
  server.get("/metrics", [&registry, scrape_time = std::move(scrape_time),
                          token = std::move(metrics_token)](const HttpRequest& request) {
    if (token && !bearer_token_matches(request, *token)) return unauthorized_response();
    HttpResponse response;
    response.content_type = kMetricsContentType;
    response.body = metrics_text(registry, scrape_time);
    return response;
  });
  server.get("/healthz", [](const HttpRequest&) {
    return HttpResponse{200, "application/json", R"({"status":"ok"})", {}};
  });
  server.get("/readyz", [readiness = std::move(readiness)](const HttpRequest&) {
    const Readiness state = readiness();
    nlohmann::json body = {{"ready", state.ready}, {"reasons", state.reasons}};
    return HttpResponse{state.ready ? 200 : 503, "application/json", body.dump(), {}};
  });
}

}  // namespace hbingest::server
