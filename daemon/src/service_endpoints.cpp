#include "hbingest/daemon/service_endpoints.h"

#include <nlohmann/json.hpp>

#include "hbingest/daemon/pipeline.h"
#include "hbingest/daemon/version.h"
#include "hbingest/daemon/writer_pool.h"

namespace hbingest::daemon {

void register_build_info(metrics::Registry& registry) {
  registry.gauge_family("hbingest_build_info", "Build information; always 1.").add({{"version", kVersion}}).set(1);
}

void register_readiness_gauge(metrics::Registry& registry, std::function<Readiness()> readiness) {
  registry.gauge_family("hbingest_ready", "1 when /readyz answers ready, else 0.")
      .add_callback({}, [readiness = std::move(readiness)] { return readiness().ready ? 1.0 : 0.0; });
}

Readiness ingest_readiness(const PipelineStats& stats, const WriterPool& writers) {
  Readiness readiness;
  if (!stats.assignment_received.load()) {
    readiness.ready = false;
    readiness.reasons.push_back("waiting for a partition assignment from the consumer group");
  }
  if (writers.backing_off()) {
    readiness.ready = false;
    readiness.reasons.push_back("HBase writes are failing and being retried");
  }
  return readiness;
}

void mount_service_endpoints(http::HttpServer& server, const metrics::Registry& registry,
                             std::function<Readiness()> readiness) {
  server.get("/metrics", [&registry](const http::HttpRequest&) {
    http::HttpResponse response;
    response.content_type = metrics::Registry::kContentType;
    response.body = registry.serialize();
    return response;
  });
  server.get("/healthz", [](const http::HttpRequest&) { return http::HttpResponse{200, "application/json", R"({"status":"ok"})", {}}; });
  server.get("/readyz", [readiness = std::move(readiness)](const http::HttpRequest&) {
    const Readiness state = readiness();
    nlohmann::json body = {{"ready", state.ready}, {"reasons", state.reasons}};
    return http::HttpResponse{state.ready ? 200 : 503, "application/json", body.dump(), {}};
  });
}

}  // namespace hbingest::daemon
