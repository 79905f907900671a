#include "query_metrics.h"

namespace hbingest::app {

QueryMetrics::QueryMetrics(prometheus::Registry& registry)
    : queries_(prometheus::BuildCounter()
                   .Name("hbingest_queries_total")
                   .Help("Queries by outcome (ok, timeout, hbase_error, error).")
                   .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("hbingest_query_latency_seconds")
                   .Help("Query latency.")
                   .Register(registry)
                   .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                                                    2.5, 5, 10})),
      rows_(prometheus::BuildHistogram()
                .Name("hbingest_query_rows")
                .Help("Rows returned per query.")
                .Register(registry)
                .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 10, 100, 1000, 10000, 100000})),
      open_scanners_(
          prometheus::BuildGauge()
              .Name("hbingest_query_open_scanners")
              .Help("Bucket scans in progress for queries (stateless: each call opens and closes its HBase scanner).")
              .Register(registry)
              .Add({})) {}

void QueryMetrics::on_query(query::QueryOutcome outcome, std::chrono::microseconds latency, std::size_t rows) noexcept {
  static constexpr const char* kNames[] = {"ok", "timeout", "hbase_error", "error"};
  try {
    queries_.Add({{"outcome", kNames[static_cast<int>(outcome)]}}).Increment();
  } catch (...) {
    // Family::Add allocates; a failed allocation loses one count, never the query.
  }
  latency_.Observe(std::chrono::duration<double>(latency).count());
  rows_.Observe(static_cast<double>(rows));
}

void QueryMetrics::on_scanner_open() noexcept { open_scanners_.Increment(); }
void QueryMetrics::on_scanner_close() noexcept { open_scanners_.Decrement(); }

}  // namespace hbingest::app
