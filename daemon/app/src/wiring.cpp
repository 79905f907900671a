#include "hbingest/app/wiring.h"

#include "hbingest/app/kerberos_logins.h"
#include "hbingest/config/group_instance_id.h"

#include "hbingest/connectors/kafka_security.h"
#include "hbingest/routing/build_routes.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace hbingest::app {

connectors::Thrift2Options thrift2_options(const config::HBaseConfig& hbase) {
  connectors::Thrift2Options options;
  options.endpoints = hbase.endpoints;
  options.transport = hbase.transport == config::ThriftTransport::framed ? connectors::ThriftTransportKind::framed
                                                                         : connectors::ThriftTransportKind::buffered;
  options.protocol = hbase.protocol == config::ThriftProtocol::binary ? connectors::ThriftProtocolKind::binary
                                                                      : connectors::ThriftProtocolKind::compact;
  options.connect_timeout = hbase.connect_timeout;
  options.read_timeout = hbase.read_timeout;
  options.max_frame_bytes = hbase.framed_max_frame_bytes;
  options.tls.enabled = hbase.tls.enabled;
  options.tls.ca_file = hbase.tls.ca_file.value_or("").string();
  options.tls.cert_file = hbase.tls.cert_file.value_or("").string();
  options.tls.key_file = hbase.tls.key_file.value_or("").string();
  options.tls.verify_hostname = hbase.tls.verify_hostname;
  options.sasl.enabled = hbase.sasl.mechanism == config::SaslMechanism::gssapi;
  options.sasl.service = hbase.sasl.service;
  options.sasl.server_host = hbase.sasl.server_principal_host == "_HOST" ? "" : hbase.sasl.server_principal_host;
  switch (hbase.sasl.qop) {
    case config::SaslQop::authentication:
      options.sasl.qop = connectors::SaslQop::authentication;
      break;
    case config::SaslQop::integrity:
      options.sasl.qop = connectors::SaslQop::integrity;
      break;
    case config::SaslQop::privacy:
      options.sasl.qop = connectors::SaslQop::privacy;
      break;
  }
  options.sasl.principal = hbase.sasl.principal.value_or("");
  // The private cache KerberosLogins keeps the TGT of hbase.sasl.principal in (kerberos_logins.h):
  // every command that connects logs in before it makes a connection.
  if (options.sasl.enabled) options.sasl.ccache = kHBaseCcache;
  return options;
}

connectors::HttpSchemaRegistryOptions schema_registry_options(const config::SchemaRegistryConfig& registry) {
  connectors::HttpSchemaRegistryOptions options;
  options.url = registry.url.value_or("");
  options.basic_auth_user = registry.basic_auth.user.value_or("");
  options.basic_auth_password = registry.basic_auth.password.value_or("");
  options.tls_ca_file = registry.tls.ca_file.value_or("").string();
  options.tls_cert_file = registry.tls.cert_file.value_or("").string();
  options.tls_key_file = registry.tls.key_file.value_or("").string();
  options.timeout = registry.timeout;
  return options;
}

connectors::KafkaSourceOptions kafka_source_options(const config::KafkaConfig& kafka) {
  connectors::KafkaSourceOptions options;
  options.bootstrap_servers = kafka.bootstrap_servers;
  options.group_id = kafka.group_id;
  options.group_instance_id = config::resolve_group_instance_id(kafka.group_instance_id, config::host_name());
  options.topics = kafka.topics;
  options.properties = kafka.properties;
  // GSSAPI: the daemon logs in from the keytab itself (KerberosLogins); librdkafka's kinit stays off.
  if (connectors::uses_gssapi(options.properties)) connectors::use_own_kerberos_login(options.properties);
  options.statistics_interval_ms = static_cast<int>(kafka.statistics_interval.count());
  options.startup_check_timeout = kafka.startup_check_timeout;
  return options;
}

query::EngineOptions engine_options(const config::QueryConfig& query) {
  query::EngineOptions options;
  options.concurrency = query.concurrency;
  options.chunk_rows = query.chunk_rows;
  options.prefetch_chunks = query.prefetch_chunks;
  options.deadline = query.deadline;
  return options;
}

connectors::DeadLetterProducerOptions dead_letter_options(const config::Config& config) {
  connectors::DeadLetterProducerOptions options;
  options.topic = config.dlq.topic;
  options.max_letter_bytes = config.dlq.max_letter_bytes;
  options.producer.bootstrap_servers = config.kafka.bootstrap_servers;
  options.producer.startup_check_timeout = config.kafka.startup_check_timeout;
  // Security settings (SSL/SASL) apply to the producer too; consumer-only keys would be rejected.
  static const char* const kSharedPrefixes[] = {"security.", "ssl.", "sasl.", "client.id", "socket.", "broker."};
  for (const auto& [key, value] : config.kafka.properties) {
    for (const char* prefix : kSharedPrefixes) {
      if (key.rfind(prefix, 0) == 0) options.producer.properties[key] = value;
    }
  }
  for (const auto& [key, value] : config.dlq.properties) options.producer.properties[key] = value;
  if (connectors::uses_gssapi(options.producer.properties)) {
    connectors::use_own_kerberos_login(options.producer.properties);
  }
  return options;
}

connectors::WriteOptions write_options(const config::WriterConfig& writer) {
  static const std::map<std::string, connectors::Durability> kDurability = {
      {"USE_DEFAULT", connectors::Durability::use_default},
      {"SKIP_WAL", connectors::Durability::skip_wal},
      {"ASYNC_WAL", connectors::Durability::async_wal},
      {"SYNC_WAL", connectors::Durability::sync_wal},
      {"FSYNC_WAL", connectors::Durability::fsync_wal}};
  const auto it = kDurability.find(writer.durability);
  if (it == kDurability.end()) throw std::invalid_argument("unknown durability '" + writer.durability + "'");
  return connectors::WriteOptions{it->second};
}

ingest::RetryPolicy retry_policy(const config::WriterConfig& writer) {
  return ingest::RetryPolicy{writer.retry_initial_backoff, writer.retry_max_backoff};
}

int writer_batches_while_querying(const config::WriterConfig& writer) {
  // Half: a query's scans then find the gateways and region servers no busier than with half the
  // writers, while ingest keeps most of its rate (its batches are CPU-bound on a small cluster, so
  // fewer of them each finish sooner).
  return std::max(1, writer.writers / 2);
}

std::size_t kafka_read_ahead_bytes(const config::Config& config) {
  const std::size_t budget = config.writer.max_inflight_bytes;
  if (const auto it = config.kafka.properties.find("queued.max.messages.kbytes"); it != config.kafka.properties.end()) {
    std::size_t kbytes = 0;
    const auto& text = it->second;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), kbytes);
    // Not a number: librdkafka refuses it at the start; check-config refuses more than half the budget.
    if (ec == std::errc{} && ptr == text.data() + text.size()) return std::min(kbytes, budget / 2 / 1024) * 1024;
  }
  // A fixed share, set once: librdkafka cannot change it while running. An eighth of the default
  // budget is the 4 MiB that was as fast as 64 MiB on the local stack (bench/README.md) and keeps
  // the footprint small; a larger budget buys a deeper read-ahead for a longer link.
  constexpr std::size_t kMiB = 1024 * 1024;
  return std::min(std::clamp(budget / 8, kMiB, 64 * kMiB), budget / 2) / 1024 * 1024;
}

ingest::PipelineOptions pipeline_options(const config::Config& config) {
  ingest::PipelineOptions options;
  options.decode = config.decode;
  // The routes' formats join decode.topic_formats: the decoder reads a topic's values one way.
  options.decode.topic_formats = routing::topic_formats(config);
  // Made whenever a url is set; only the formats that read schema ids ask it anything.
  if (config.schema_registry.url) {
    options.schema_registry = connectors::make_http_schema_registry(schema_registry_options(config.schema_registry));
  }
  options.schema_cache = {config.schema_registry.cache_max_schemas, config.schema_registry.cache_max_bytes};
  options.batch =
      ingest::BatchLimits{config.writer.batch_max_rows, config.writer.batch_max_bytes, config.writer.linger};
  // `auto` row bounds: no cap on what flow control derives from the writers' flow.
  constexpr std::size_t kNoCap = std::numeric_limits<std::size_t>::max();
  options.flow = ingest::FlowLimits{config.writer.max_inflight_rows.value_or(kNoCap),
                                    config.writer.max_inflight_bytes - kafka_read_ahead_bytes(config),
                                    config.writer.max_inflight_rows_per_partition.value_or(kNoCap)};
  options.poll_batch = config.kafka.poll_batch;
  options.commit_interval = config.kafka.commit_interval;
  options.shutdown_deadline = config.shutdown_deadline;
  options.family_ttl = config.table.ttl;
  options.dead_letter_topic = config.dlq.topic;
  options.on_invalid = config.dlq.on_invalid;
  options.unknown_type = config.dlq.unknown_type;
  return options;
}

ingest::TablePlan table_plan(const routing::Route& route, const std::string& table) {
  return {table, route.columns.families(), route.key->split_keys()};
}

std::vector<ingest::TablePlan> route_tables(const routing::RouteSet& routes) {
  std::vector<ingest::TablePlan> tables;
  for (const auto& route : routes.all()) {
    const auto names = route->table.enumerate(route->max_tables);
    if (!names) continue;
    for (const auto& name : *names) tables.push_back(table_plan(*route, name));
  }
  return tables;
}

ingest::MetricLabels metric_labels(const config::Config& config) {
  ingest::MetricLabels labels;
  for (const auto& route : config.routes) labels.event_types.insert(route.event_types.begin(), route.event_types.end());
  // Topics matched by a `^regex` subscription are named by the broker, not by us: they count as
  // "other". A bound such as "the first N topics seen" would give each replica and each restart
  // its own label set, which no dashboard or alert can name.
  for (const auto& topic : config.kafka.topics) {
    if (!topic.starts_with('^')) labels.topics.insert(topic);
  }
  return labels;
}

ingest::TableSettings table_settings(const config::Config& config) {
  return ingest::TableSettings{{config.decode.family},
                               std::chrono::duration_cast<std::chrono::seconds>(config.table.ttl),
                               config.table.bloom_filter,
                               config.table.compression};
}

ingest::TableWatchOptions table_watch_options(const config::Config& config) {
  ingest::TableWatchOptions options;
  options.families = {config.decode.family};
  options.interval = config.table.check_interval;
  // Recheck and min_gap keep their defaults: bounded by the admin calls' cost, not by taste.
  options.recheck = std::min(options.recheck, options.interval);
  // Tables known at start are created by bootstrap before the watch runs; those a template makes
  // at run time are created by the watch.
  if (config.table.create_table) options.create = table_settings(config);
  return options;
}

}  // namespace hbingest::app
