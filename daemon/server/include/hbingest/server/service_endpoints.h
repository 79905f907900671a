#pragma once
// The operational HTTP endpoints: /metrics (Prometheus text), /healthz (alive), /readyz (ready to
// do its job, with the reasons when not), and the scrape-time metrics they need.

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/server/http_server.h"

namespace hbingest::server {

struct Readiness {
  bool ready = true;
  std::vector<std::string> reasons;  // why not ready
};

// Prometheus text exposition format 0.0.4, what /metrics answers with.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Values computed at scrape time. prometheus-cpp 1.0.1's Registry holds only its own families
// (there is no Registry::Register(Collectable)), so these are collected next to the registry, the
// way prometheus-cpp's pull Exposer does: by weak_ptr. Their owner keeps the shared_ptr; once it is
// gone the scrape skips them, so neither the owner nor the endpoint depends on the other's lifetime.
using ScrapeTimeMetrics = std::vector<std::weak_ptr<const prometheus::Collectable>>;

// hbingest_build_info{version="..."} 1
void register_build_info(prometheus::Registry& registry, std::string_view version);

// hbingest_ready: 1 while `readiness` says ready (what /readyz answers), 0 otherwise, for alerting
// on a pod that is alive but not doing its job. Read at scrape time, on the scraping thread.
// Lifetime: hand a weak_ptr to mount_service_endpoints (ScrapeTimeMetrics). A scrape that has
// locked it keeps this object alive until Collect() returns, so what `readiness` reads must stay
// valid until the HTTP server is stopped, not only until this object is released.
// Thread safety: Collect() may run on several threads at once; so must `readiness`.
class ReadinessGauge final : public prometheus::Collectable {
 public:
  explicit ReadinessGauge(std::function<Readiness()> readiness);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<Readiness()> readiness_;
};

// The exposition /metrics serves: `registry`'s families, then each live `scrape_time` collectable's.
std::string metrics_text(const prometheus::Registry& registry, const ScrapeTimeMetrics& scrape_time = {});

// Mounts the three endpoints. `registry` must outlive the server (stop() it first). /healthz and
// /readyz are never behind a token: the kubelet's probes cannot send one. /metrics is when
// `metrics_token` is set (http.metrics_auth; Prometheus sends it with `authorization` in its
// scrape config), otherwise open like them.
void mount_service_endpoints(HttpServer& server, const prometheus::Registry& registry, ScrapeTimeMetrics scrape_time,
                             std::function<Readiness()> readiness,
                             std::optional<std::string> metrics_token = std::nullopt);

}  // namespace hbingest::server
