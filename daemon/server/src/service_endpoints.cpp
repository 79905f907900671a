#include "hbingest/server/service_endpoints.h"

#include <nlohmann/json.hpp>


namespace hbingest::server {

void register_build_info(metrics::Registry& registry, std::string_view version) {
  registry.gauge_family("hbingest_build_info", "Build information; always 1.").add({{"version", std::string(version)}}).set(1);
}

void register_readiness_gauge(metrics::Registry& registry, std::function<Readiness()> readiness) {
  registry.gauge_family("hbingest_ready", "1 when /readyz answers ready, else 0.")
      .add_callback({}, [readiness = std::move(readiness)] { return readiness().ready ? 1.0 : 0.0; });
}

void mount_service_endpoints(HttpServer& server, const metrics::Registry& registry,
                             std::function<Readiness()> readiness) {
  server.get("/metrics", [&registry](const HttpRequest&) {
    HttpResponse response;
    response.content_type = metrics::Registry::kContentType;
    response.body = registry.serialize();
    return response;
  });
  server.get("/healthz", [](const HttpRequest&) { return HttpResponse{200, "application/json", R"({"status":"ok"})", {}}; });
  server.get("/readyz", [readiness = std::move(readiness)](const HttpRequest&) {
    const Readiness state = readiness();
    nlohmann::json body = {{"ready", state.ready}, {"reasons", state.reasons}};
    return HttpResponse{state.ready ? 200 : 503, "application/json", body.dump(), {}};
  });
}

}  // namespace hbingest::server
