#include "hbingest/ingest/readiness.h"

namespace hbingest::ingest {

std::vector<std::string> not_ready_reasons(const PipelineStats& stats, const WriterPool& writers) {
  std::vector<std::string> reasons;
  if (!stats.assignment_received.load())
    reasons.emplace_back("waiting for a partition assignment from the consumer group");
  if (writers.writes_failing()) reasons.emplace_back("HBase writes are failing and being retried");
  return reasons;
}

}  // namespace hbingest::ingest
