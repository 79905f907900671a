#pragma once
// What the pipeline reports as it runs: the Prometheus metrics implement it, tests count with it.
// Methods are called from the pipeline thread and from writer threads: implementations must be
// thread-safe and cheap. Defaults do nothing.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hbingest/connectors/source.h"
#include "hbingest/event_formats/input_format.h"

namespace hbingest::ingest {

class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;
  virtual void on_consumed(std::string_view /*topic*/, std::string_view /*event_type*/, std::size_t /*bytes*/) {}
  virtual void on_invalid(std::string_view /*reason*/) {}
  // The next offset this consumer will read from a partition (one past the last one polled): once
  // per partition and poll, for the consumer lag. It goes back when the partition's log does.
  virtual void on_consumed_position(std::string_view /*topic*/, std::int32_t /*partition*/,
                                    std::int64_t /*next_offset*/) {}
  // One send of a dead letter ended (a letter that fails is sent again: one call per send).
  virtual void on_dead_letter(connectors::DeadLetterOutcome /*outcome*/) {}
  // Letters that failed at least once and are not delivered yet, and how long the oldest of them
  // has been failing (0 when none). Called as the loop turns while there are any, and once at 0.
  virtual void on_dead_letters_retrying(std::size_t /*letters*/, std::chrono::milliseconds /*oldest*/) {}
  virtual void on_expired() {}
  virtual void on_row_queued(int /*salt_bucket*/, std::int64_t /*event_time_ms*/) {}
  virtual void on_batch_written(const std::string& /*endpoint*/, std::size_t /*rows*/, std::size_t /*bytes*/,
                                std::chrono::nanoseconds /*latency*/, std::int64_t /*oldest_event_ms*/) {}
  virtual void on_write_retry(const std::string& /*endpoint*/, const std::string& /*operation*/) {}
  // A RowSink threw something other than HBaseError (a bug or std::bad_alloc); the batch is retried.
  virtual void on_write_unexpected_error(const std::string& /*endpoint*/) {}
  virtual void on_rows_rejected(std::size_t /*rows*/) {}
  virtual void on_inflight(std::size_t /*rows*/, std::size_t /*bytes*/) {}
  virtual void on_paused_partitions(std::size_t /*count*/) {}
  // The batches the writers may send at once (DepthController), on every change (writer threads).
  virtual void on_writer_depth(std::size_t /*batches*/) {}
  // The in-flight bounds flow control applies now: derived from the flow, within the configured caps.
  virtual void on_inflight_limits(std::size_t /*rows*/, std::size_t /*rows_per_partition*/) {}
  // Partitions holding until the schema registry gives a schema (Pipeline::hold_for_schema).
  virtual void on_partitions_waiting_for_schema(std::size_t /*count*/) {}
  // The decoder's schema caches, summed (fetches and failures are totals so far).
  virtual void on_schema_cache(const event_formats::SchemaCacheStats& /*stats*/) {}
  // The group coordinator stored this next-offset (acknowledged, not merely sent).
  virtual void on_commit(std::string_view /*topic*/, std::int32_t /*partition*/, std::int64_t /*offset*/) {}
  // A synchronous commit (on revoke, at the stop) failed or timed out.
  virtual void on_commit_failure() {}
  // A periodic (asynchronous) commit failed; it is sent again.
  virtual void on_async_commit_failure() {}
  // A route table's state as the table watch last saw it: writable, or missing/disabled/without
  // the family. Reported on the first verdict and on every change.
  virtual void on_table_available(const std::string& /*table*/, bool /*available*/) {}
  // The partitions left this consumer: per-partition series must go, or two replicas report one partition.
  virtual void on_partitions_revoked(const std::vector<std::pair<std::string, std::int32_t>>& /*partitions*/) {}
};

}  // namespace hbingest::ingest
