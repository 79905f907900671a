#include "hbingest/daemon/connector_options.h"

#include <map>
#include <stdexcept>

namespace hbingest::daemon {

connectors::Thrift2Options thrift2_options(const config::HBaseConfig& hbase) {
  connectors::Thrift2Options options;
  options.endpoints = hbase.endpoints;
  options.transport = hbase.transport == config::ThriftTransport::framed ? connectors::ThriftTransportKind::framed
                                                                         : connectors::ThriftTransportKind::buffered;
  options.protocol = hbase.protocol == config::ThriftProtocol::binary ? connectors::ThriftProtocolKind::binary
                                                                      : connectors::ThriftProtocolKind::compact;
  options.connect_timeout = hbase.connect_timeout;
  options.read_timeout = hbase.read_timeout;
  return options;
}

connectors::KafkaSourceOptions kafka_source_options(const config::KafkaConfig& kafka) {
  connectors::KafkaSourceOptions options;
  options.bootstrap_servers = kafka.bootstrap_servers;
  options.group_id = kafka.group_id;
  options.topics = kafka.topics;
  options.properties = kafka.properties;
  options.statistics_interval_ms = static_cast<int>(kafka.statistics_interval.count());
  return options;
}

connectors::DeadLetterProducerOptions dead_letter_options(const config::Config& config) {
  connectors::DeadLetterProducerOptions options;
  options.topic = config.dlq.topic;
  options.producer.bootstrap_servers = config.kafka.bootstrap_servers;
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
      {"USE_DEFAULT", connectors::Durability::use_default}, {"SKIP_WAL", connectors::Durability::skip_wal},
      {"ASYNC_WAL", connectors::Durability::async_wal},     {"SYNC_WAL", connectors::Durability::sync_wal},
      {"FSYNC_WAL", connectors::Durability::fsync_wal}};
  const auto it = kDurability.find(writer.durability);
  if (it == kDurability.end()) throw std::invalid_argument("unknown durability '" + writer.durability + "'");
  return connectors::WriteOptions{it->second};
}

connectors::TableSpec table_spec(const config::Config& config, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys) {
  connectors::TableSpec spec;
  const auto colon = qualified_table.find(':');
  spec.ns = colon == std::string::npos ? config.hbase.ns : qualified_table.substr(0, colon);
  spec.table = colon == std::string::npos ? qualified_table : qualified_table.substr(colon + 1);
  spec.family.name = config.decode.family;
  spec.family.ttl = std::chrono::duration_cast<std::chrono::seconds>(config.table.ttl);
  spec.family.max_versions = 1;
  spec.family.bloom_filter = config.table.bloom_filter;
  spec.family.compression = config.table.compression;
  spec.split_keys = split_keys;
  return spec;
}

}  // namespace hbingest::daemon
