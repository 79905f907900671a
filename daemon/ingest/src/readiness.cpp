#include "hbingest/ingest/readiness.h"

namespace hbingest::ingest {

std::vector<std::string> not_ready_reasons(const PipelineStats& stats, const WriterPool& writers,
                                           const TableWatch* tables, const KafkaSecurityAlarm* kafka_security) {
  std::vector<std::string> reasons;
  if (!stats.assignment_received.load())
    reasons.emplace_back("waiting for a partition assignment from the consumer group");
  if (writers.writes_failing()) reasons.emplace_back("HBase writes are failing and being retried");
  if (tables != nullptr) {
    for (auto& problem : tables->problems()) reasons.push_back(std::move(problem));
  }
  if (kafka_security != nullptr) {
    if (auto failure = kafka_security->active()) reasons.push_back("Kafka TLS/SASL failing: " + std::move(*failure));
  }
  return reasons;
}

}  // namespace hbingest::ingest
