#pragma once
// The operational HTTP endpoints: /metrics (Prometheus text), /healthz (alive), /readyz (ready to
// do its job, with the reasons when not).

#include <functional>
#include <string>
#include <vector>

#include "hbingest/http/http_server.h"
#include "hbingest/metrics/registry.h"

namespace hbingest::daemon {

struct PipelineStats;
class WriterPool;

struct Readiness {
  bool ready = true;
  std::vector<std::string> reasons;  // why not ready
};

// hbingest_build_info{version="..."} 1
void register_build_info(metrics::Registry& registry);

// Ready when the consumer has joined its group (an empty assignment counts: more members than
// partitions is legitimate) and HBase accepts writes (no writer is backing off).
Readiness ingest_readiness(const PipelineStats& stats, const WriterPool& writers);

// hbingest_ready: 1 while `readiness` says ready (what /readyz answers), for alerting on a pod that
// is alive but not doing its job. The registry must not outlive what `readiness` reads.
void register_readiness_gauge(metrics::Registry& registry, std::function<Readiness()> readiness);

void mount_service_endpoints(http::HttpServer& server, const metrics::Registry& registry,
                             std::function<Readiness()> readiness);

}  // namespace hbingest::daemon
