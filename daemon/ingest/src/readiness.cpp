#include "hbingest/ingest/readiness.h"

#include <chrono>

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
  if (const auto waiting = stats.partitions_waiting_for_schema.load(); waiting > 0) {
    const auto since =
        std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(stats.schema_wait_since_ns.load()));
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since);
    reasons.push_back(std::to_string(waiting) + " partition(s) waiting " + std::to_string(seconds.count()) +
                      " s for the schema registry: " + stats.schema_wait_reason.get());
  }
  if (kafka_security != nullptr) {
    if (auto failure = kafka_security->active()) reasons.push_back("Kafka TLS/SASL failing: " + std::move(*failure));
  }
  return reasons;
}

}  // namespace hbingest::ingest
