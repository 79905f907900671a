#pragma once
// Whether the ingest side is doing its job, for /readyz and the hbingest_ready gauge.

#include <string>
#include <vector>

#include "hbingest/ingest/pipeline.h"
#include "hbingest/ingest/writer_pool.h"

namespace hbingest::ingest {

// Empty when ready: the consumer has joined its group (an empty assignment counts: more members
// than partitions is legitimate) and HBase accepts writes (no writer is backing off). Otherwise
// one sentence per reason. Safe from any thread.
std::vector<std::string> not_ready_reasons(const PipelineStats& stats, const WriterPool& writers);

}  // namespace hbingest::ingest
