#include "hbingest/app/wiring.h"

#include "hbingest/app/key_uniqueness.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
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
  options.topics = kafka.topics;
  options.properties = kafka.properties;
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

ingest::PipelineOptions pipeline_options(const config::Config& config) {
  ingest::PipelineOptions options;
  options.decode = config.decode;
  // Made whenever a url is set; only the formats that read schema ids ask it anything.
  if (config.schema_registry.url) {
    options.schema_registry = connectors::make_http_schema_registry(schema_registry_options(config.schema_registry));
  }
  options.schema_cache = {config.schema_registry.cache_max_schemas, config.schema_registry.cache_max_bytes};
  options.batch =
      ingest::BatchLimits{config.writer.batch_max_rows, config.writer.batch_max_bytes, config.writer.linger};
  options.flow = ingest::FlowLimits{config.writer.max_inflight_rows, config.writer.max_inflight_bytes,
                                    config.writer.max_inflight_rows_per_partition};
  options.poll_batch = config.kafka.poll_batch;
  options.commit_interval = config.kafka.commit_interval;
  options.shutdown_deadline = config.shutdown_deadline;
  options.family_ttl = config.table.ttl;
  options.dead_letter_topic = config.dlq.topic;
  options.on_invalid = config.dlq.on_invalid;
  options.unknown_type = config.dlq.unknown_type;
  return options;
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
  return options;
}

namespace {

// The inline `key:` node of a route in the original document, so key spec errors carry the
// config file's own lines; a null node when it cannot be found (then the dumped YAML text is used).
YAML::Node inline_key_node(const config::Config& config, std::string_view name) {
  try {
    const YAML::Node root = YAML::LoadFile(config.source.string());
    if (name == "default_route") return root["default_route"]["key"];
    const std::size_t index = std::stoul(std::string(name.substr(name.find('[') + 1)));
    return root["routes"][index]["key"];
  } catch (const std::exception&) {
    return YAML::Node();
  }
}

keyspec::KeySpec load_key_spec(const config::Config& config, const config::RouteConfig& route, std::string_view name) {
  if (route.preset) return keyspec::KeySpec::preset(*route.preset, route.preset_params);
  if (route.key_file) return keyspec::KeySpec::from_yaml_file(*route.key_file);
  if (route.key_yaml) {
    const YAML::Node node = config.source.empty() ? YAML::Node() : inline_key_node(config, name);
    return node.IsMap() ? keyspec::KeySpec::from_yaml_node(node, config.source.string())
                        : keyspec::KeySpec::from_yaml_text(*route.key_yaml, route.key_source);
  }
  throw keyspec::SpecError("route for table '" + route.table + "' has no key spec");
}

// load_key_spec, with every problem naming the config file and the route.
keyspec::KeySpec load_key_spec_with_context(const config::Config& config, const config::RouteConfig& route,
                                            std::string_view name) {
  // The spec's own problems name their file/line and component; each says which route it belongs to.
  const std::string prefix = route.key_source + ": " + std::string(name) + ".key: ";
  try {
    return load_key_spec(config, route, name);
  } catch (const keyspec::SpecError& e) {
    std::vector<std::string> problems;
    problems.reserve(e.problems().size());
    for (const auto& problem : e.problems()) problems.push_back(prefix + problem);
    throw keyspec::SpecError(std::move(problems));
  } catch (const std::exception& e) {
    throw keyspec::SpecError(prefix + e.what());
  }
}

}  // namespace

keyspec::KeySpec build_key_spec(const config::Config& config, const config::RouteConfig& route, std::string_view name) {
  keyspec::KeySpec spec = load_key_spec_with_context(config, route, name);
  auto uniqueness = check_key_uniqueness(config, spec, name);
  if (!uniqueness.problems.empty()) {
    for (auto& problem : uniqueness.problems) problem = route.key_source + ": " + problem;
    throw keyspec::SpecError(std::move(uniqueness.problems));
  }
  return spec;
}

ingest::Router make_router(const config::Config& config) {
  const auto route_of = [&](const config::RouteConfig& route, std::string_view name) {
    return ingest::Route{connectors::TableName::parse(route.table, config.hbase.ns).qualified(), route.event_types,
                         build_key_spec(config, route, name)};
  };
  std::vector<ingest::Route> routes;
  for (std::size_t i = 0; i < config.routes.size(); ++i) {
    routes.push_back(route_of(config.routes[i], "routes[" + std::to_string(i) + "]"));
  }
  std::optional<ingest::Route> default_route;
  if (config.default_route) default_route = route_of(*config.default_route, "default_route");
  return ingest::Router(std::move(routes), std::move(default_route));
}

}  // namespace hbingest::app
