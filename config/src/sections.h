#pragma once
// The option table of every config section, and of the top level.

#include "hbingest/config/config.h"
#include "schema.h"

namespace hbingest::config::detail {

const Options<KafkaConfig>& kafka_options();
const Options<HBaseConfig>& hbase_options();
const Options<HBaseTlsConfig>& hbase_tls_options();
const Options<HBaseSaslConfig>& hbase_sasl_options();
const Options<WriterConfig>& writer_options();
const Options<DecodeConfig>& decode_options();
const Options<SchemaRegistryConfig>& schema_registry_options();
const Options<SchemaRegistryBasicAuthConfig>& schema_registry_basic_auth_options();
const Options<SchemaRegistryTlsConfig>& schema_registry_tls_options();
const Options<RouteConfig>& route_options();
const Options<ColumnConfig>& column_options();
const Options<TableConfig>& table_options();
const Options<DlqConfig>& dlq_options();
const Options<HttpConfig>& http_options();
const Options<QueryConfig>& query_options();
const Options<LoggingConfig>& logging_options();
// Top level: one option per section (reading the nested table) plus shutdown_deadline.
const Options<Config>& config_options();

// Valid values shared with the sanity check.
const std::vector<std::string>& durability_names();
const std::vector<std::string>& log_level_names();

}  // namespace hbingest::config::detail
