#pragma once
// Config sections → connector options (the connectors do not depend on the config module).

#include "hbingest/config/config.h"
#include "hbingest/connectors/dead_letter_producer.h"
#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/connectors/row_sink.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::daemon {

connectors::Thrift2Options thrift2_options(const config::HBaseConfig& hbase);
connectors::KafkaSourceOptions kafka_source_options(const config::KafkaConfig& kafka);
connectors::DeadLetterProducerOptions dead_letter_options(const config::Config& config);
connectors::WriteOptions write_options(const config::WriterConfig& writer);
// The table spec for one route's table: family, TTL, versions, bloom filter, salt split keys.
connectors::TableSpec table_spec(const config::Config& config, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys);

}  // namespace hbingest::daemon
