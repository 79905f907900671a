#pragma once
// The operational HTTP endpoints: /metrics (Prometheus text), /healthz (alive), /readyz (ready to
// do its job, with the reasons when not).

#include <functional>
#include <string>
#include <vector>

#include "hbingest/server/http_server.h"
#include "hbingest/metrics/registry.h"

namespace hbingest::server {

struct Readiness {
  bool ready = true;
  std::vector<std::string> reasons;  // why not ready
};

// hbingest_build_info{version="..."} 1
void register_build_info(metrics::Registry& registry, std::string_view version);

// hbingest_ready: 1 while `readiness` says ready (what /readyz answers), for alerting on a pod that
// is alive but not doing its job. The registry must not outlive what `readiness` reads.
void register_readiness_gauge(metrics::Registry& registry, std::function<Readiness()> readiness);

void mount_service_endpoints(HttpServer& server, const metrics::Registry& registry,
                             std::function<Readiness()> readiness);

}  // namespace hbingest::server
