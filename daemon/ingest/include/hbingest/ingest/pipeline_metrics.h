#pragma once
// The pipeline's Prometheus metrics: a PipelineObserver that records into a metrics::Registry,
// plus consumer lag and committed offsets from librdkafka's statistics JSON.
//
// Thread safety: writer-thread callbacks (on_batch_written, on_write_retry, on_rows_rejected) may
// run concurrently; the others run on the pipeline thread only, which lets them cache labelled
// children without a lock.

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "hbingest/ingest/pipeline_observer.h"
#include "hbingest/metrics/registry.h"

namespace hbingest::ingest {

class PipelineMetrics final : public PipelineObserver {
 public:
  PipelineMetrics(metrics::Registry& registry, std::function<std::int64_t()> now_ms);

  void on_consumed(std::string_view topic, std::string_view event_type, std::size_t bytes) override;
  void on_invalid(std::string_view reason) override;
  void on_dead_letter(bool delivered) override;
  void on_expired() override;
  void on_row_queued(int salt_bucket, std::int64_t event_time_ms) override;
  void on_batch_written(const std::string& endpoint, std::size_t rows, std::size_t bytes,
                        std::chrono::nanoseconds latency, std::int64_t oldest_event_ms) override;
  void on_write_retry(const std::string& endpoint, const std::string& operation) override;
  void on_rows_rejected(std::size_t rows) override;
  void on_inflight(std::size_t rows, std::size_t bytes) override;
  void on_paused_partitions(std::size_t count) override;
  void on_commit(std::string_view topic, std::int32_t partition, std::int64_t offset) override;
  void on_commit_failure() override;
  void on_partitions_revoked(const std::vector<std::pair<std::string, std::int32_t>>& partitions) override;

  // Parses librdkafka's statistics JSON (statistics.interval.ms) into lag gauges. Pipeline thread.
  void on_kafka_statistics(const std::string& json);

  // Totals for the progress line and systemd STATUS.
  double rows_written() const { return rows_written_total_.value(); }
  // Sum of consumer lag over assigned partitions, from the last statistics report (-1: none yet).
  std::int64_t total_lag() const { return total_lag_.load(); }

 private:
  std::function<std::int64_t()> now_ms_;

  metrics::Family<metrics::Counter>& consumed_;
  metrics::Family<metrics::Counter>& consumed_bytes_;
  metrics::Family<metrics::Counter>& invalid_;
  metrics::Family<metrics::Counter>& dead_letters_;
  metrics::Counter& expired_;
  metrics::Family<metrics::Counter>& rows_written_;
  metrics::Counter& rows_written_total_;
  metrics::Counter& batches_;
  metrics::Histogram& batch_rows_;
  metrics::Histogram& batch_bytes_;
  metrics::Histogram& write_latency_;
  metrics::Histogram& end_to_end_latency_;
  metrics::Family<metrics::Counter>& retries_;
  metrics::Counter& rows_rejected_;
  metrics::Gauge& inflight_rows_;
  metrics::Gauge& inflight_bytes_;
  metrics::Gauge& paused_partitions_;
  metrics::Family<metrics::Gauge>& committed_offset_;
  metrics::Counter& commit_failures_;
  metrics::Family<metrics::Gauge>& consumer_lag_;
  metrics::Family<metrics::Counter>& salt_bucket_writes_;

  // Pipeline-thread caches of labelled children (family lookups take a lock).
  std::map<std::pair<std::string, std::string>, std::pair<metrics::Counter*, metrics::Counter*>, std::less<>> consumed_cache_;
  std::map<int, metrics::Counter*> bucket_cache_;
  std::atomic<std::int64_t> total_lag_{-1};
};

}  // namespace hbingest::ingest
