#include "hbingest/ingest/pipeline_metrics.h"

#include <simdjson.h>

#include <string>
#include <vector>

namespace hbingest::ingest {

namespace {

prometheus::Histogram::BucketBoundaries latency_buckets_seconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& registry, const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& registry, const std::string& name,
                                             const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

// Our histograms carry no labels: one child with the family's bucket bounds.
prometheus::Histogram& histogram(prometheus::Registry& registry, const std::string& name, const std::string& help,
                                 const prometheus::Histogram::BucketBoundaries& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}

// Removes every cached child of `partitions` from `family` and from the cache.
void remove_partitions(prometheus::Family<prometheus::Gauge>& family,
                       std::map<std::pair<std::string, std::string>, prometheus::Gauge*>& cache,
                       const std::vector<std::pair<std::string, std::int32_t>>& partitions) {
  for (const auto& [topic, partition] : partitions) {
    const auto it = cache.find({topic, std::to_string(partition)});
    if (it == cache.end()) continue;
    family.Remove(it->second);
    cache.erase(it);
  }
}

}  // namespace

PipelineMetrics::PipelineMetrics(prometheus::Registry& registry, std::function<std::int64_t()> now_ms,
                                 MetricLabels labels)
    : now_ms_(std::move(now_ms)),
      labels_(std::move(labels)),
      consumed_(
          counter(registry, "hbingest_events_consumed_total", "Events read from Kafka, by topic and event type.")),
      consumed_bytes_(counter(registry, "hbingest_consumed_bytes_total", "Payload bytes read from Kafka, by topic.")),
      invalid_(counter(registry, "hbingest_events_invalid_total", "Events rejected before HBase, by reason.")),
      dead_letters_(counter(registry, "hbingest_dead_letters_total",
                            "Dead-letter sends by outcome: delivered, failed (sent again after a backoff), rejected "
                            "(the record itself refused; sent again with the headers only).")),
      dead_letters_retrying_(gauge(registry, "hbingest_dead_letters_retrying",
                                   "Dead letters that failed at least once and are not delivered yet; each holds "
                                   "back its partition's commits.")
                                 .Add({})),
      dead_letter_oldest_retry_(gauge(registry, "hbingest_dead_letter_oldest_retry_seconds",
                                      "How long the oldest dead letter not delivered yet has been failing (0: none).")
                                    .Add({})),
      expired_(counter(registry, "hbingest_events_expired_total",
                       "Events skipped because they were older than the TTL on arrival.")
                   .Add({})),
      rows_written_(counter(registry, "hbingest_rows_written_total", "Rows HBase acknowledged, by Thrift2 endpoint.")),
      rows_written_total_(
          counter(registry, "hbingest_rows_written_all_total", "Rows HBase acknowledged, all endpoints.").Add({})),
      batches_(counter(registry, "hbingest_batches_written_total", "putMultiple batches HBase acknowledged.").Add({})),
      batch_rows_(histogram(registry, "hbingest_batch_rows", "Rows per written batch.",
                            {1, 10, 50, 100, 250, 500, 1000, 2500, 5000})),
      batch_bytes_(histogram(registry, "hbingest_batch_bytes", "Bytes per written batch.",
                             {1024, 16384, 65536, 262144, 1048576, 2097152, 4194304, 8388608})),
      write_latency_(histogram(registry, "hbingest_write_latency_seconds", "putMultiple latency, successful calls.",
                               latency_buckets_seconds())),
      end_to_end_latency_(histogram(registry, "hbingest_end_to_end_latency_seconds",
                                    "Event time to HBase acknowledgement (oldest row of each batch).",
                                    {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 600})),
      retries_(
          counter(registry, "hbingest_write_retries_total", "Failed HBase calls that will be retried, by endpoint.")),
      unexpected_write_errors_(counter(registry, "hbingest_write_unexpected_errors_total",
                                       "Writes that failed with something other than an HBase error (a bug or "
                                       "out of memory), retried; by endpoint.")),
      rows_rejected_(
          counter(registry, "hbingest_rows_rejected_total", "Rows HBase refused for good (sent to the DLQ).").Add({})),
      inflight_rows_(
          gauge(registry, "hbingest_inflight_events", "Events consumed and not yet stored, dead-lettered or skipped.")
              .Add({})),
      inflight_bytes_(gauge(registry, "hbingest_inflight_bytes",
                            "Memory held by in-flight events: message plus decoded row, as allocated "
                            "(what writer.max_inflight_bytes bounds).")
                          .Add({})),
      paused_partitions_(gauge(registry, "hbingest_paused_partitions", "Partitions paused by flow control.").Add({})),
      writer_depth_(gauge(registry, "hbingest_writer_inflight_batches_limit",
                          "Batches the writers may send at once, as the depth controller chose it from batch "
                          "latency and acknowledged rows/s (at most writer.writers).")
                        .Add({})),
      inflight_rows_limit_(gauge(registry, "hbingest_inflight_rows_limit",
                                 "The in-flight offset bound flow control applies now: derived from the writers' "
                                 "flow, at most writer.max_inflight_rows.")
                               .Add({})),
      inflight_rows_per_partition_limit_(gauge(registry, "hbingest_inflight_rows_per_partition_limit",
                                               "The per-partition in-flight offset bound applied now: derived, at most "
                                               "writer.max_inflight_rows_per_partition.")
                                             .Add({})),
      kafka_read_ahead_(gauge(registry, "hbingest_kafka_read_ahead_bytes",
                              "librdkafka's prefetch bound (queued.max.messages.kbytes), part of "
                              "writer.max_inflight_bytes unless kafka.properties sets it.")
                            .Add({})),
      partitions_waiting_for_schema_(gauge(registry, "hbingest_partitions_waiting_for_schema",
                                           "Partitions holding at a message whose schema the schema registry did "
                                           "not give (unreachable, timing out, 5xx); they resume by themselves.")
                                         .Add({})),
      schema_fetches_(counter(registry, "hbingest_schema_fetches_total",
                              "Answers the schema registry gave to schema fetches (schemas and 404s).")
                          .Add({})),
      schema_fetch_failures_(counter(registry, "hbingest_schema_fetch_failures_total",
                                     "Schema fetches the registry did not answer (unreachable, timeout, 5xx).")
                                 .Add({})),
      schema_cache_schemas_(
          gauge(registry, "hbingest_schema_cache_schemas", "Schemas held parsed, by id (schema_registry.cache_*).")
              .Add({})),
      schema_cache_bytes_(
          gauge(registry, "hbingest_schema_cache_bytes", "Schema text held by the schema cache, in bytes.").Add({})),
      committed_offset_(
          gauge(registry, "hbingest_committed_offset",
                "Last next-offset the group coordinator acknowledged as committed, by topic and partition.")),
      commit_failures_(counter(registry, "hbingest_commit_failures_total", "Offset commits that failed.").Add({})),
      // A family of its own, not a label on hbingest_commit_failures_total: that series (synchronous
      // commits on revoke and shutdown, the HbingestCommitFailures alert) keeps its identity.
      async_commit_failures_(counter(registry, "hbingest_kafka_commit_failures_total",
                                     "Offset commits that failed, by mode (async: the periodic commits, each sent "
                                     "again).")
                                 .Add({{"mode", "async"}})),
      consumer_lag_(
          gauge(registry, "hbingest_consumer_lag",
                "Messages behind the partition end: its end from librdkafka statistics minus the position consumed.")),
      salt_bucket_writes_(
          counter(registry, "hbingest_salt_bucket_rows_total", "Rows queued per salt bucket (hot-spot detection).")),
      table_available_(
          gauge(registry, "hbingest_table_available",
                "1 when the route table exists, is enabled and has the column family; 0 while not "
                "(its writes are held). From the table watch's last answered check. One series per table watched: "
                "at most the routes' plain tables plus their templates' max_tables.")),
      security_errors_(counter(registry, "hbingest_kafka_security_errors_total",
                               "Kafka TLS or SASL failures after startup (wrong certificate, CA or password; "
                               "librdkafka keeps retrying), by client: consumer, dead_letter.")),
      security_errors_consumer_(security_errors_.Add({{"client", "consumer"}})),
      security_errors_dead_letter_(security_errors_.Add({{"client", "dead_letter"}})) {}

void PipelineMetrics::on_consumed(std::string_view topic, std::string_view event_type, std::size_t bytes) {
  // Both values come from outside (the payload, the broker): only configured ones become labels.
  const auto label = [this](const std::set<std::string, std::less<>>& configured, std::string_view value) {
    const auto it = configured.find(value);
    return it == configured.end() ? &other_ : &*it;
  };
  const auto key = std::make_pair(label(labels_.topics, topic), label(labels_.event_types, event_type));
  auto it = consumed_cache_.find(key);
  if (it == consumed_cache_.end()) {
    auto* events = &consumed_.Add({{"topic", *key.first}, {"event_type", *key.second}});
    auto* bytes_counter = &consumed_bytes_.Add({{"topic", *key.first}});
    it = consumed_cache_.emplace(key, std::make_pair(events, bytes_counter)).first;
  }
  it->second.first->Increment();
  it->second.second->Increment(static_cast<double>(bytes));
}

void PipelineMetrics::on_invalid(std::string_view reason) {
  invalid_.Add({{"reason", std::string(reason)}}).Increment();
}

void PipelineMetrics::on_dead_letter(connectors::DeadLetterOutcome outcome) {
  switch (outcome) {
    case connectors::DeadLetterOutcome::delivered:
      dead_letters_.Add({{"outcome", "delivered"}}).Increment();
      return;
    case connectors::DeadLetterOutcome::failed:
      dead_letters_.Add({{"outcome", "failed"}}).Increment();
      return;
    case connectors::DeadLetterOutcome::rejected:
      dead_letters_.Add({{"outcome", "rejected"}}).Increment();
      return;
  }
}

void PipelineMetrics::on_dead_letters_retrying(std::size_t letters, std::chrono::milliseconds oldest) {
  dead_letters_retrying_.Set(static_cast<double>(letters));
  dead_letter_oldest_retry_.Set(std::chrono::duration<double>(oldest).count());
}

void PipelineMetrics::on_expired() { expired_.Increment(); }

void PipelineMetrics::on_row_queued(int salt_bucket, std::int64_t) {
  if (salt_bucket < 0) return;
  auto it = bucket_cache_.find(salt_bucket);
  if (it == bucket_cache_.end()) {
    it = bucket_cache_.emplace(salt_bucket, &salt_bucket_writes_.Add({{"bucket", std::to_string(salt_bucket)}})).first;
  }
  it->second->Increment();
}

void PipelineMetrics::on_batch_written(const std::string& endpoint, std::size_t rows, std::size_t bytes,
                                       std::chrono::nanoseconds latency, std::int64_t oldest_event_ms) {
  rows_written_.Add({{"endpoint", endpoint}}).Increment(static_cast<double>(rows));
  rows_written_total_.Increment(static_cast<double>(rows));
  batches_.Increment();
  batch_rows_.Observe(static_cast<double>(rows));
  batch_bytes_.Observe(static_cast<double>(bytes));
  write_latency_.Observe(std::chrono::duration<double>(latency).count());
  if (oldest_event_ms > 0) {
    end_to_end_latency_.Observe(static_cast<double>(now_ms_() - oldest_event_ms) / 1000.0);
  }
}

void PipelineMetrics::on_write_retry(const std::string& endpoint, const std::string& operation) {
  retries_.Add({{"endpoint", endpoint}, {"operation", operation}}).Increment();
}

void PipelineMetrics::on_write_unexpected_error(const std::string& endpoint) {
  unexpected_write_errors_.Add({{"endpoint", endpoint}}).Increment();
}

void PipelineMetrics::on_rows_rejected(std::size_t rows) { rows_rejected_.Increment(static_cast<double>(rows)); }

void PipelineMetrics::on_inflight(std::size_t rows, std::size_t bytes) {
  inflight_rows_.Set(static_cast<double>(rows));
  inflight_bytes_.Set(static_cast<double>(bytes));
}

void PipelineMetrics::on_paused_partitions(std::size_t count) { paused_partitions_.Set(static_cast<double>(count)); }

void PipelineMetrics::on_writer_depth(std::size_t batches) { writer_depth_.Set(static_cast<double>(batches)); }

void PipelineMetrics::on_inflight_limits(std::size_t rows, std::size_t rows_per_partition) {
  inflight_rows_limit_.Set(static_cast<double>(rows));
  inflight_rows_per_partition_limit_.Set(static_cast<double>(rows_per_partition));
}

void PipelineMetrics::on_kafka_read_ahead(std::size_t bytes) { kafka_read_ahead_.Set(static_cast<double>(bytes)); }

void PipelineMetrics::on_partitions_waiting_for_schema(std::size_t count) {
  partitions_waiting_for_schema_.Set(static_cast<double>(count));
}

void PipelineMetrics::on_schema_cache(const event_formats::SchemaCacheStats& stats) {
  // Totals in, increments out: a counter only ever grows.
  if (stats.fetches > schema_totals_seen_.fetches) {
    schema_fetches_.Increment(static_cast<double>(stats.fetches - schema_totals_seen_.fetches));
  }
  if (stats.fetch_failures > schema_totals_seen_.fetch_failures) {
    schema_fetch_failures_.Increment(static_cast<double>(stats.fetch_failures - schema_totals_seen_.fetch_failures));
  }
  schema_totals_seen_ = stats;
  schema_cache_schemas_.Set(static_cast<double>(stats.cached_schemas));
  schema_cache_bytes_.Set(static_cast<double>(stats.cached_bytes));
}

void PipelineMetrics::on_commit(std::string_view topic, std::int32_t partition, std::int64_t offset) {
  PartitionKey key{std::string(topic), std::to_string(partition)};
  auto it = committed_offset_cache_.find(key);
  if (it == committed_offset_cache_.end()) {
    auto* child = &committed_offset_.Add({{"topic", key.first}, {"partition", key.second}});
    it = committed_offset_cache_.emplace(std::move(key), child).first;
  }
  it->second->Set(static_cast<double>(offset));
}

void PipelineMetrics::on_commit_failure() { commit_failures_.Increment(); }

void PipelineMetrics::on_async_commit_failure() { async_commit_failures_.Increment(); }

void PipelineMetrics::on_kafka_security_error(std::string_view client) {
  (client == "consumer" ? security_errors_consumer_ : security_errors_dead_letter_).Increment();
}

void PipelineMetrics::on_partitions_revoked(const std::vector<std::pair<std::string, std::int32_t>>& partitions) {
  remove_partitions(committed_offset_, committed_offset_cache_, partitions);
  for (const auto& [topic, partition] : partitions) {
    const auto it = lags_.find({topic, std::to_string(partition)});
    if (it == lags_.end()) continue;
    if (it->second.gauge != nullptr) consumer_lag_.Remove(it->second.gauge);
    lags_.erase(it);
  }
  if (total_lag_ >= 0) {
    std::int64_t total = 0;
    for (const auto& [key, p] : lags_) total += std::max<std::int64_t>(lag_of(p), 0);
    total_lag_ = total;
  }
}

std::int64_t PipelineMetrics::lag_of(const PartitionLag& p) {
  if (p.end >= 0 && p.position >= 0) return std::max<std::int64_t>(p.end - p.position, 0);
  return p.reported_lag;
}

void PipelineMetrics::update_lag(const PartitionKey& key, PartitionLag& p) {
  const std::int64_t lag = lag_of(p);
  if (lag < 0) return;
  if (p.gauge == nullptr) p.gauge = &consumer_lag_.Add({{"topic", key.first}, {"partition", key.second}});
  p.gauge->Set(static_cast<double>(lag));
  std::int64_t total = 0;
  for (const auto& [k, other] : lags_) total += std::max<std::int64_t>(lag_of(other), 0);
  total_lag_ = total;
}

void PipelineMetrics::on_consumed_position(std::string_view topic, std::int32_t partition, std::int64_t next_offset) {
  PartitionKey key{std::string(topic), std::to_string(partition)};
  auto& p = lags_[key];
  p.position = next_offset;
  // Shown only once a statistics report said where the partition ends (total_lag() stays -1 until then).
  if (p.end >= 0 || p.reported_lag >= 0) update_lag(key, p);
}

void PipelineMetrics::on_kafka_statistics(const std::string& json) {
  // {"topics": {"t": {"partitions": {"0": {"consumer_lag": N, "hi_offset": H, "ls_offset": L, ...},
  // "-1": {...}}}}}. The report is up to statistics.interval.ms old, and consumer_lag counts from
  // the last commit: with everything consumed it still showed tens of thousands. Only the end is
  // taken from it; the position comes from the pipeline (on_consumed_position).
  simdjson::dom::parser parser;
  simdjson::dom::object topics;
  if (parser.parse(json)["topics"].get(topics) != simdjson::SUCCESS) return;
  bool any = false;
  for (auto [topic, topic_stats] : topics) {
    simdjson::dom::object partitions;
    if (topic_stats["partitions"].get(partitions) != simdjson::SUCCESS) continue;
    for (auto [partition, stats] : partitions) {
      if (partition == "-1") continue;  // librdkafka's internal unassigned-partition bucket
      std::int64_t lag = -1;
      std::int64_t end = -1;
      if (stats["consumer_lag"].get(lag) != simdjson::SUCCESS) lag = -1;
      // The last stable offset is where a read_committed consumer (librdkafka's default) ends.
      if (stats["ls_offset"].get(end) != simdjson::SUCCESS || end < 0) {
        if (stats["hi_offset"].get(end) != simdjson::SUCCESS) end = -1;
      }
      PartitionKey key{std::string(topic), std::string(partition)};
      auto it = lags_.find(key);
      // Not assigned here (librdkafka reports every partition it knows, with consumer_lag -1).
      if (it == lags_.end() && lag < 0) continue;
      if (it == lags_.end()) it = lags_.emplace(std::move(key), PartitionLag{}).first;
      it->second.end = end;
      it->second.reported_lag = lag;
      any = true;
      update_lag(it->first, it->second);
    }
  }
  if (!any && total_lag_ < 0) total_lag_ = 0;
}

void PipelineMetrics::on_table_available(const std::string& table, bool available) {
  // Family::Add returns the existing child for known labels. Tables come from the configuration, or
  // from a template's allowed values, bounded by its max_tables.
  table_available_.Add({{"table", table}}).Set(available ? 1 : 0);
}

}  // namespace hbingest::ingest
