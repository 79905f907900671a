#pragma once
// RowSink over the HBase Thrift2 gateway (putMultiple and deleteMultiple, in runs of one kind:
// mutation_runs.h). One instance = one connection; the pipeline runs one per writer thread.

#include <memory>

#include "hbingest/connectors/row_sink.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::connectors {

// `first_endpoint` spreads writers over the endpoints (writer i starts at endpoint i).
// write(): a whole-call failure that HBase calls permanent (e.g. one row too long) is narrowed
// down by splitting the batch, so only the offending rows are returned as rejected. Over framed
// transport a call larger than options.max_frame_bytes is split before it is sent (the gateway
// would drop it and every retry alike), and a single row that alone is larger is rejected.
// Deletes take the same paths as puts.
std::unique_ptr<RowSink> make_thrift2_sink(const Thrift2Options& options, std::size_t first_endpoint = 0);

}  // namespace hbingest::connectors
