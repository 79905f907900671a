#pragma once
// The pipeline's Prometheus metrics: a PipelineObserver that registers its families in a
// prometheus::Registry and records into them, plus the consumer lag (the partition's end from
// librdkafka's statistics JSON against the position the pipeline reached) and the consumer's failed
// asynchronous commits.
//
// Ownership: the registry owns the families; it must outlive this object (which keeps references
// to them) and nothing else may Remove() them.
// Thread safety: writer-thread callbacks (on_batch_written, on_write_retry, on_write_unexpected_error,
// on_rows_rejected) and the table watch's (on_table_available) may run concurrently; the others run on the pipeline
// thread only, which lets them cache labelled children without a lock. Scrapes (Registry::Collect) may run concurrently
// with all of them.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "hbingest/ingest/pipeline_observer.h"

namespace hbingest::ingest {

// The label values the per-event series may carry, from the configuration (hbingest::app builds
// them): every other value an event or the broker brings is reported as "other", so the number of
// series stays bounded whatever producers send.
struct MetricLabels {
  std::set<std::string, std::less<>> event_types;  // the event types named by the routes
  std::set<std::string, std::less<>> topics;       // the literal topics subscribed to
};

class PipelineMetrics final : public PipelineObserver {
 public:
  // The label value for every event type or topic not in MetricLabels.
  static constexpr std::string_view kOther = "other";

  // Registers every pipeline family. Throws std::invalid_argument when a name is already taken
  // with another type (prometheus-cpp's rule).
  PipelineMetrics(prometheus::Registry& registry, std::function<std::int64_t()> now_ms, MetricLabels labels);

  // Counts under the configured topic and event type, or under "other" (also for an empty type:
  // an event that could not be decoded).
  void on_consumed(std::string_view topic, std::string_view event_type, std::size_t bytes) override;
  void on_invalid(std::string_view reason) override;
  void on_consumed_position(std::string_view topic, std::int32_t partition, std::int64_t next_offset) override;
  void on_dead_letter(connectors::DeadLetterOutcome outcome) override;
  void on_dead_letters_retrying(std::size_t letters, std::chrono::milliseconds oldest) override;
  void on_expired() override;
  void on_row_queued(int salt_bucket, std::int64_t event_time_ms) override;
  void on_batch_written(const std::string& endpoint, std::size_t rows, std::size_t bytes,
                        std::chrono::nanoseconds latency, std::int64_t oldest_event_ms) override;
  void on_write_retry(const std::string& endpoint, const std::string& operation) override;
  void on_write_unexpected_error(const std::string& endpoint) override;
  void on_rows_rejected(std::size_t rows) override;
  void on_inflight(std::size_t rows, std::size_t bytes) override;
  void on_paused_partitions(std::size_t count) override;
  void on_writer_depth(std::size_t batches) override;
  void on_inflight_limits(std::size_t rows, std::size_t rows_per_partition) override;
  // librdkafka's read-ahead (queued.max.messages.kbytes), as the app set it at the start.
  void on_kafka_read_ahead(std::size_t bytes);
  void on_partitions_waiting_for_schema(std::size_t count) override;
  void on_schema_cache(const event_formats::SchemaCacheStats& stats) override;
  void on_commit(std::string_view topic, std::int32_t partition, std::int64_t offset) override;
  void on_commit_failure() override;
  void on_async_commit_failure() override;
  void on_partitions_revoked(const std::vector<std::pair<std::string, std::int32_t>>& partitions) override;
  // From the table watch's thread.
  void on_table_available(const std::string& table, bool available) override;

  // Takes each partition's end (last stable offset, else high watermark) from librdkafka's
  // statistics JSON (statistics.interval.ms). Pipeline thread.
  void on_kafka_statistics(const std::string& json);

  // One Kafka TLS or SASL failure after startup (KafkaSourceOptions / KafkaProducerOptions
  // on_security_error), by client: "consumer" or "dead_letter". Any thread.
  void on_kafka_security_error(std::string_view client);

  // Totals for the progress line and systemd STATUS.
  double rows_written() const { return rows_written_total_.Value(); }
  // Sum of consumer lag over assigned partitions (-1: no statistics report yet). A partition's lag
  // is its latest known end minus the position the pipeline reached (never below 0: the end is as
  // old as the last report, the position current); librdkafka's own consumer_lag, measured from the
  // last commit when the report was made, only until the pipeline reports a position.
  std::int64_t total_lag() const { return total_lag_.load(); }

 private:
  using PartitionKey = std::pair<std::string, std::string>;  // topic, partition number as text

  std::function<std::int64_t()> now_ms_;
  const MetricLabels labels_;
  const std::string other_{kOther};

  prometheus::Family<prometheus::Counter>& consumed_;
  prometheus::Family<prometheus::Counter>& consumed_bytes_;
  prometheus::Family<prometheus::Counter>& invalid_;
  prometheus::Family<prometheus::Counter>& dead_letters_;
  prometheus::Gauge& dead_letters_retrying_;
  prometheus::Gauge& dead_letter_oldest_retry_;
  prometheus::Counter& expired_;
  prometheus::Family<prometheus::Counter>& rows_written_;
  prometheus::Counter& rows_written_total_;
  prometheus::Counter& batches_;
  prometheus::Histogram& batch_rows_;
  prometheus::Histogram& batch_bytes_;
  prometheus::Histogram& write_latency_;
  prometheus::Histogram& end_to_end_latency_;
  prometheus::Family<prometheus::Counter>& retries_;
  prometheus::Family<prometheus::Counter>& unexpected_write_errors_;
  prometheus::Counter& rows_rejected_;
  prometheus::Gauge& inflight_rows_;
  prometheus::Gauge& inflight_bytes_;
  prometheus::Gauge& paused_partitions_;
  prometheus::Gauge& writer_depth_;
  prometheus::Gauge& inflight_rows_limit_;
  prometheus::Gauge& inflight_rows_per_partition_limit_;
  prometheus::Gauge& kafka_read_ahead_;
  prometheus::Gauge& partitions_waiting_for_schema_;
  prometheus::Counter& schema_fetches_;
  prometheus::Counter& schema_fetch_failures_;
  prometheus::Gauge& schema_cache_schemas_;
  prometheus::Gauge& schema_cache_bytes_;
  event_formats::SchemaCacheStats schema_totals_seen_;  // the counters' last totals (pipeline thread)
  prometheus::Family<prometheus::Gauge>& committed_offset_;
  prometheus::Counter& commit_failures_;
  prometheus::Counter& async_commit_failures_;
  prometheus::Family<prometheus::Gauge>& consumer_lag_;
  prometheus::Family<prometheus::Counter>& salt_bucket_writes_;
  prometheus::Family<prometheus::Gauge>& table_available_;
  prometheus::Family<prometheus::Counter>& security_errors_;
  prometheus::Counter& security_errors_consumer_;
  prometheus::Counter& security_errors_dead_letter_;

  // Pipeline-thread caches of labelled children (Family::Add takes the family's lock). The
  // per-partition ones also say which children to Remove() when a partition is revoked.
  // Keyed by the label values as they live in labels_ (or other_): at most (topics + 1) ×
  // (event types + 1) entries, and no allocation per event.
  std::map<std::pair<const std::string*, const std::string*>, std::pair<prometheus::Counter*, prometheus::Counter*>>
      consumed_cache_;
  std::map<int, prometheus::Counter*> bucket_cache_;
  std::map<PartitionKey, prometheus::Gauge*> committed_offset_cache_;
  struct PartitionLag {
    std::int64_t end = -1;           // from the last statistics report
    std::int64_t reported_lag = -1;  // librdkafka's consumer_lag in that report
    std::int64_t position = -1;      // from the pipeline
    prometheus::Gauge* gauge = nullptr;
  };
  static std::int64_t lag_of(const PartitionLag& p);
  // Sets the partition's gauge (creating it once a lag is known) and the total.
  void update_lag(const PartitionKey& key, PartitionLag& p);
  std::map<PartitionKey, PartitionLag> lags_;
  std::atomic<std::int64_t> total_lag_{-1};
};

}  // namespace hbingest::ingest
