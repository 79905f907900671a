#pragma once
// Whether the ingest side is doing its job, for /readyz and the hbingest_ready gauge.

#include <string>
#include <vector>

#include "hbingest/ingest/kafka_security_alarm.h"
#include "hbingest/ingest/pipeline.h"
#include "hbingest/ingest/table_watch.h"
#include "hbingest/ingest/writer_pool.h"

namespace hbingest::ingest {

// Empty when ready: the consumer has joined its group (an empty assignment counts: more members
// than partitions is legitimate), HBase accepts writes (no writer is backing off) and every route
// table is writable as far as `tables` (optional) knows, and no Kafka TLS or SASL failure is recent
// as far as `kafka_security` (optional) knows. Otherwise one sentence per reason. Safe from any thread.
std::vector<std::string> not_ready_reasons(const PipelineStats& stats, const WriterPool& writers,
                                           const TableWatch* tables = nullptr,
                                           const KafkaSecurityAlarm* kafka_security = nullptr);

}  // namespace hbingest::ingest
