#pragma once
// The query engine's Prometheus metrics: a QueryObserver that registers its families in a
// prometheus::Registry. Used by QueryService and by `hbingest metrics-catalog`.
//
// Ownership: the registry must outlive this object. Thread safety: the engine calls it from its
// worker threads concurrently; every method is thread-safe (prometheus-cpp metrics are atomic).

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "hbingest/query/query_engine.h"

namespace hbingest::app {

class QueryMetrics final : public query::QueryObserver {
 public:
  explicit QueryMetrics(prometheus::Registry& registry);

  void on_query(query::QueryOutcome outcome, std::chrono::microseconds latency, std::size_t rows) noexcept override;
  void on_scanner_open() noexcept override;
  void on_scanner_close() noexcept override;

 private:
  prometheus::Family<prometheus::Counter>& queries_;
  prometheus::Histogram& latency_;
  prometheus::Histogram& rows_;
  prometheus::Gauge& open_scanners_;
};

}  // namespace hbingest::app
