#include "hbingest/ingest/pipeline_metrics.h"

#include <simdjson.h>

namespace hbingest::ingest {

namespace {

std::vector<double> latency_buckets_seconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

}  // namespace

PipelineMetrics::PipelineMetrics(metrics::Registry& registry, std::function<std::int64_t()> now_ms)
    : now_ms_(std::move(now_ms)),
      consumed_(registry.counter_family("hbingest_events_consumed_total", "Events read from Kafka, by topic and event type.")),
      consumed_bytes_(registry.counter_family("hbingest_consumed_bytes_total", "Payload bytes read from Kafka, by topic.")),
      invalid_(registry.counter_family("hbingest_events_invalid_total", "Events rejected before HBase, by reason.")),
      dead_letters_(registry.counter_family("hbingest_dead_letters_total", "Dead letters by outcome (delivered, failed).")),
      expired_(registry.counter_family("hbingest_events_expired_total", "Events skipped because they were older than the TTL on arrival.").add({})),
      rows_written_(registry.counter_family("hbingest_rows_written_total", "Rows HBase acknowledged, by Thrift2 endpoint.")),
      rows_written_total_(registry.counter_family("hbingest_rows_written_all_total", "Rows HBase acknowledged, all endpoints.").add({})),
      batches_(registry.counter_family("hbingest_batches_written_total", "putMultiple batches HBase acknowledged.").add({})),
      batch_rows_(registry.histogram_family("hbingest_batch_rows", "Rows per written batch.",
                                            {1, 10, 50, 100, 250, 500, 1000, 2500, 5000}).add({})),
      batch_bytes_(registry.histogram_family("hbingest_batch_bytes", "Bytes per written batch.",
                                             {1024, 16384, 65536, 262144, 1048576, 2097152, 4194304, 8388608}).add({})),
      write_latency_(registry.histogram_family("hbingest_write_latency_seconds", "putMultiple latency, successful calls.",
                                               latency_buckets_seconds()).add({})),
      end_to_end_latency_(registry.histogram_family("hbingest_end_to_end_latency_seconds",
                                                    "Event time to HBase acknowledgement (oldest row of each batch).",
                                                    {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 600}).add({})),
      retries_(registry.counter_family("hbingest_write_retries_total", "Failed HBase calls that will be retried, by endpoint.")),
      rows_rejected_(registry.counter_family("hbingest_rows_rejected_total", "Rows HBase refused for good (sent to the DLQ).").add({})),
      inflight_rows_(registry.gauge_family("hbingest_inflight_events", "Events consumed and not yet stored, dead-lettered or skipped.").add({})),
      inflight_bytes_(registry.gauge_family("hbingest_inflight_bytes", "Payload bytes of in-flight events.").add({})),
      paused_partitions_(registry.gauge_family("hbingest_paused_partitions", "Partitions paused by flow control.").add({})),
      committed_offset_(registry.gauge_family("hbingest_committed_offset", "Last committed next-offset, by topic and partition.")),
      commit_failures_(registry.counter_family("hbingest_commit_failures_total", "Offset commits that failed.").add({})),
      consumer_lag_(registry.gauge_family("hbingest_consumer_lag", "Messages behind the partition end, from librdkafka statistics.")),
      salt_bucket_writes_(registry.counter_family("hbingest_salt_bucket_rows_total", "Rows queued per salt bucket (hot-spot detection).")) {}

void PipelineMetrics::on_consumed(std::string_view topic, std::string_view event_type, std::size_t bytes) {
  auto key = std::make_pair(std::string(topic), std::string(event_type));
  auto it = consumed_cache_.find(key);
  if (it == consumed_cache_.end()) {
    auto* events = &consumed_.add({{"topic", key.first}, {"event_type", event_type.empty() ? "unknown" : key.second}});
    auto* bytes_counter = &consumed_bytes_.add({{"topic", key.first}});
    it = consumed_cache_.emplace(std::move(key), std::make_pair(events, bytes_counter)).first;
  }
  it->second.first->increment();
  it->second.second->increment(static_cast<double>(bytes));
}

void PipelineMetrics::on_invalid(std::string_view reason) { invalid_.add({{"reason", std::string(reason)}}).increment(); }

void PipelineMetrics::on_dead_letter(bool delivered) {
  dead_letters_.add({{"outcome", delivered ? "delivered" : "failed"}}).increment();
}

void PipelineMetrics::on_expired() { expired_.increment(); }

void PipelineMetrics::on_row_queued(int salt_bucket, std::int64_t) {
  if (salt_bucket < 0) return;
  auto it = bucket_cache_.find(salt_bucket);
  if (it == bucket_cache_.end()) {
    it = bucket_cache_.emplace(salt_bucket, &salt_bucket_writes_.add({{"bucket", std::to_string(salt_bucket)}})).first;
  }
  it->second->increment();
}

void PipelineMetrics::on_batch_written(const std::string& endpoint, std::size_t rows, std::size_t bytes,
                                       std::chrono::nanoseconds latency, std::int64_t oldest_event_ms) {
  rows_written_.add({{"endpoint", endpoint}}).increment(static_cast<double>(rows));
  rows_written_total_.increment(static_cast<double>(rows));
  batches_.increment();
  batch_rows_.observe(static_cast<double>(rows));
  batch_bytes_.observe(static_cast<double>(bytes));
  write_latency_.observe(std::chrono::duration<double>(latency).count());
  if (oldest_event_ms > 0) {
    end_to_end_latency_.observe(static_cast<double>(now_ms_() - oldest_event_ms) / 1000.0);
  }
}

void PipelineMetrics::on_write_retry(const std::string& endpoint, const std::string& operation) {
  retries_.add({{"endpoint", endpoint}, {"operation", operation}}).increment();
}

void PipelineMetrics::on_rows_rejected(std::size_t rows) { rows_rejected_.increment(static_cast<double>(rows)); }

void PipelineMetrics::on_inflight(std::size_t rows, std::size_t bytes) {
  inflight_rows_.set(static_cast<double>(rows));
  inflight_bytes_.set(static_cast<double>(bytes));
}

void PipelineMetrics::on_paused_partitions(std::size_t count) { paused_partitions_.set(static_cast<double>(count)); }

void PipelineMetrics::on_commit(std::string_view topic, std::int32_t partition, std::int64_t offset) {
  committed_offset_.add({{"topic", std::string(topic)}, {"partition", std::to_string(partition)}})
      .set(static_cast<double>(offset));
}

void PipelineMetrics::on_commit_failure() { commit_failures_.increment(); }

void PipelineMetrics::on_partitions_revoked(const std::vector<std::pair<std::string, std::int32_t>>& partitions) {
  for (const auto& [topic, partition] : partitions) {
    const metrics::Labels labels{{"topic", topic}, {"partition", std::to_string(partition)}};
    committed_offset_.remove(labels);
    consumer_lag_.remove(labels);
  }
}

void PipelineMetrics::on_kafka_statistics(const std::string& json) {
  // {"topics": {"t": {"partitions": {"0": {"consumer_lag": N, ...}, "-1": {...}}}}}
  simdjson::dom::parser parser;
  simdjson::dom::object topics;
  if (parser.parse(json)["topics"].get(topics) != simdjson::SUCCESS) return;
  std::int64_t total = 0;
  for (auto [topic, topic_stats] : topics) {
    simdjson::dom::object partitions;
    if (topic_stats["partitions"].get(partitions) != simdjson::SUCCESS) continue;
    for (auto [partition, stats] : partitions) {
      if (partition == "-1") continue;  // librdkafka's internal unassigned-partition bucket
      std::int64_t lag = -1;
      if (stats["consumer_lag"].get(lag) != simdjson::SUCCESS || lag < 0) continue;
      consumer_lag_.add({{"topic", std::string(topic)}, {"partition", std::string(partition)}})
          .set(static_cast<double>(lag));
      total += lag;
    }
  }
  total_lag_ = total;
}

}  // namespace hbingest::ingest
