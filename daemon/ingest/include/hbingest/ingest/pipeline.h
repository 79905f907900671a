#pragma once
// The ingest loop: poll Kafka → decode → route → key → batch → writer pool → commit.
//
// Guarantee: an offset is committed only when every event below it is stored in HBase, acked by
// the dead-letter topic, or deliberately skipped (expired, or on_invalid: skip). Keys and cell
// timestamps are pure functions of the event and its Kafka position, so redelivery after a crash
// rewrites identical cells instead of adding rows.
//
// Threading: run() and the RebalanceListener callbacks execute on the calling (pipeline) thread;
// stats() may be read from any thread.

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/schema_registry.h"
#include "hbingest/connectors/source.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/ingest/backoff.h"
#include "hbingest/ingest/batcher.h"
#include "hbingest/ingest/offset_tracker.h"
#include "hbingest/ingest/pipeline_observer.h"
#include "hbingest/ingest/shutdown_budget.h"
#include "hbingest/ingest/startup_timeline.h"
#include "hbingest/ingest/writer_pool.h"
#include "hbingest/routing/route.h"
#include "hbingest/support/guarded_text.h"
#include "hbingest/support/rate_limited_log.h"

namespace hbingest::ingest {

struct PipelineStats {
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<std::uint64_t> rows_stored{0};
  std::atomic<std::uint64_t> dead_lettered{0};
  std::atomic<std::uint64_t> skipped{0};  // expired + skipped invalid
  std::atomic<std::uint64_t> commits{0};
  std::atomic<std::size_t> inflight_rows{0};
  std::atomic<std::size_t> paused_partitions{0};
  std::atomic<std::size_t> assigned_partitions{0};
  std::atomic<bool> assignment_received{false};
  // Partitions holding because the schema registry did not give a schema (Pipeline::hold_for_schema),
  // and since when the oldest of them holds (steady-clock ns, 0: none).
  std::atomic<std::size_t> partitions_waiting_for_schema{0};
  std::atomic<std::int64_t> schema_wait_since_ns{0};
  // What the last failed fetch said ("schema id 7: http://…: connection refused"), for /readyz.
  support::GuardedText schema_wait_reason;
  // Steady-clock ns of the last loop iteration: the systemd watchdog pings only while it moves.
  std::atomic<std::int64_t> last_loop_ns{0};
};

// Consumption pauses when the events in flight reach these bounds and resumes below 80% of them.
// Rows count the offsets kept by the offset tracker (a stuck event keeps the completed ones after
// it); bytes count what the pending events hold in memory, decoded cells included (held_bytes.h).
// The row bounds applied are derived from the writers' flow (derived_inflight_rows(), the
// per-partition one the same) and these are their caps; the byte bound applies as it is.
struct FlowLimits {
  std::size_t max_inflight_rows = 200000;
  std::size_t max_inflight_bytes = 256 * 1024 * 1024;
  std::size_t max_inflight_rows_per_partition = 50000;
};

// What the pipeline takes from the configuration; hbingest::app builds it from config::Config.
struct PipelineOptions {
  config::DecodeConfig decode;
  // The formats' schemas (null when every format is JSON) and the bound of their caches.
  std::shared_ptr<connectors::SchemaRegistry> schema_registry;
  event_formats::SchemaCacheLimits schema_cache;
  event_formats::EventDecoderOptions decoder{};  // reads_key: some route reads the decoded key
  BatchLimits batch;
  FlowLimits flow;
  std::size_t poll_batch = 1000;  // messages per poll
  std::chrono::milliseconds commit_interval{1000};
  // A periodic commit still unanswered after this long is sent again (connectors::CommitListener:
  // an answer may never come).
  std::chrono::milliseconds commit_resend_after{15000};
  // The whole way out after a stop (or a failure): drain, final commit, leaving the group and the
  // caller's dead-letter flush all fit in it (shutdown_budget.h).
  std::chrono::milliseconds shutdown_deadline{30000};
  // Upper bounds of the synchronous commit on revoke and of leaving the group; while stopping,
  // the shutdown budget bounds them further.
  std::chrono::milliseconds sync_commit_timeout{30000};
  std::chrono::milliseconds close_timeout{10000};
  std::chrono::milliseconds family_ttl{600000};  // the table's TTL: events older are not written
  // dlq.topic: a record read from it is never dead-lettered again (skipped and counted instead).
  std::string dead_letter_topic;
  config::OnInvalid on_invalid = config::OnInvalid::dlq;
  config::UnknownType unknown_type = config::UnknownType::dlq;
  // A dead letter that failed is sent again after initial_backoff, doubling up to max_backoff.
  RetryPolicy dead_letter_retry{std::chrono::milliseconds(100), std::chrono::milliseconds(30000)};
  // Told, on the pipeline thread, of each table a templated route makes for the first time (within
  // its max_tables), before the first row for it is batched: the app has the table watch check it
  // (and create it under table.create_table). Must not block.
  std::function<void(const std::string& table, const routing::Route& route)> on_new_table;
  // Told of the first assignment, message and stored row (on the pipeline thread); may be null.
  // Must outlive the pipeline.
  StartupTimeline* startup_timeline = nullptr;
};

// Thrown by run() when an invalid event meets `on_invalid: fail`. Nothing at or after its offset
// is committed.
class InvalidEventStop : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Registers itself as the source's rebalance and commit listener for its whole life and
// unregisters in its destructor, so the source, the dead-letter sink, the writers, the router and
// the observer must outlive it. Neither copyable nor movable (the source holds a pointer to it).
class Pipeline final : public connectors::RebalanceListener, public connectors::CommitListener {
 public:
  using NowMs = std::function<std::int64_t()>;  // wall clock in epoch ms (injected for tests)

  Pipeline(PipelineOptions options, connectors::Source& source, connectors::DeadLetterSink& dead_letters,
           WriterPool& writers, const routing::RouteSet& routes, PipelineObserver& observer, NowMs now_ms);
  ~Pipeline() override;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  Pipeline(Pipeline&&) = delete;
  Pipeline& operator=(Pipeline&&) = delete;

  // Runs until `stop` becomes true, then spends at most the shutdown deadline on the way out:
  // flushes open batches, waits for writes and dead letters, commits synchronously, leaves the group.
  // Every way out closes the source. When run() throws (InvalidEventStop, a fatal Kafka error...)
  // it neither flushes nor waits: it commits the positions already stored (never the failing event
  // or anything after it), leaves the group without calling back into the pipeline, and rethrows.
  void run(const std::atomic<bool>& stop);

  const PipelineStats& stats() const { return stats_; }
  // Started when run() stops consuming; what is left of it bounds the caller's own last steps.
  const ShutdownBudget& shutdown_budget() const { return shutdown_; }

  void on_revoked(const std::vector<connectors::TopicPartition>& partitions) override;
  void on_lost(const std::vector<connectors::TopicPartition>& partitions) override;
  void on_assigned(const std::vector<connectors::TopicPartition>& partitions) override;

  void on_commit_acknowledged(const std::vector<connectors::PartitionOffset>& offsets) override;
  void on_commit_failed(const std::vector<connectors::PartitionOffset>& offsets, const std::string& error) override;

 private:
  // Forgets partitions this member no longer owns (revoked or lost).
  void release(const std::vector<connectors::TopicPartition>& partitions);
  void consume(const std::atomic<bool>& stop);
  // Tells the observer how far each partition of a polled batch was read (the consumer lag).
  void report_positions(const std::vector<connectors::SourceMessage>& messages);
  void drain();
  // The way out of run() after an exception. Never throws: the caller rethrows the original.
  // `commit_stored` is false after an OffsetTrackerError: positions from a tracker that contradicts
  // itself may belong to another era of the partition, and committing one could skip events.
  void leave_after_failure(bool commit_stored) noexcept;
  // The offsets of `tp` went back below `last` (its last tracked one): its log was truncated or
  // re-created, its offset reset, or a batch polled before a rebalance overlaps the re-read. Its
  // tracking starts afresh, as on assignment; nothing of the earlier era is committed or completes.
  void start_new_era(const connectors::SourceMessage& message, std::int64_t last);
  // Drops the failed dead letters of `partitions` waiting for their next send (see release()).
  void drop_dead_letter_retries(const std::vector<connectors::TopicPartition>& partitions);
  void handle(connectors::SourceMessage&& message);
  // The cell timestamp and TTL of the current event (event_), or nullopt when the event is done
  // with: expired (skipped and completed) or stamped too far ahead (rejected).
  struct CellTime {
    std::int64_t cell_ms;
    std::int64_t ttl;
    std::chrono::steady_clock::time_point steady_reading;
  };
  std::optional<CellTime> cell_time(connectors::SourceMessage& message, OffsetTracker::Generation generation);
  // A mutation with deletes was stamped `cell_ms`: under ingest_time, later stamps come after it.
  void stamped_a_delete(std::int64_t cell_ms);
  // A tombstone, tracked: what its topic's routes say it does (on_tombstone). `decoded` is what
  // decode_key_only made of it for a delete (nullopt: read, ready to key).
  void process_tombstone(connectors::SourceMessage& message, OffsetTracker::Generation generation,
                         const routing::Route* deleting, std::optional<event_formats::DecodeFailure> decoded);
  // The table of the current event on `route` (a template resolved and admitted), or null with
  // table_problem_ saying why not. Valid while the route set and the pipeline are.
  const std::string* table_of(const routing::Route& route, std::string_view topic);
  // Decodes, tracks, routes, keys and batches one message. Returns false, leaving `message` as it
  // is and untracked, when its schema could not be fetched (schema_wait_ says why).
  bool process(connectors::SourceMessage& message);
  // Keeps `message` and pauses its partition until the registry gives its schema: every later
  // message of the partition waits behind it, nothing of it is tracked, so nothing at or past it is
  // committed, dead-lettered or lost (docs/operations.md, "Schema registry down").
  void hold_for_schema(connectors::SourceMessage&& message);
  // Decodes the waiting messages of the partitions whose backoff has passed, in order; a partition
  // whose messages all went through is resumed (unless flow control paused it too).
  void retry_schema_holds();
  void report_schema_holds();
  // Dead-letters, skips or stops on an event that cannot be stored, as dlq.on_invalid says.
  // `skippable` is false for rows HBase refused: `skip` covers undecodable events and keys only.
  // `generation` is the one its offset was tracked in.
  // `schema_id`: the Confluent frame's, carried by the letter in a header.
  void reject(connectors::SourceMessage&& message, OffsetTracker::Generation generation, const std::string& stage,
              const std::string& reason, const std::string& detail, bool skippable = true,
              std::optional<std::int32_t> schema_id = std::nullopt);
  // A dead letter from its first send until it is delivered: the letter itself (shared with the
  // sink while a send is in flight, never copied) and its retry state.
  struct DeadLetterAttempt {
    std::shared_ptr<connectors::DeadLetter> letter;
    OffsetTracker::Generation generation = OffsetTracker::kNoGeneration;  // of its original's offset
    int failures = 0;
    std::chrono::steady_clock::time_point failing_since{};  // the first failure
  };
  void send_dead_letter(DeadLetterAttempt attempt);
  void on_dead_letter_done(DeadLetterAttempt attempt, connectors::DeadLetterOutcome outcome, const std::string& error);
  // Sends the failed letters whose backoff has passed and reports the retry gauges. Never waits.
  void resend_due_dead_letters();
  void complete(connectors::TopicPartitionRef tp, std::int64_t offset, OffsetTracker::Generation generation);
  void submit(std::vector<Batch> batches);
  void drain_completions();
  // Commits the committable positions of the owned partitions (of `only` among them, if given).
  void commit(bool synchronous, const std::vector<connectors::TopicPartition>* only = nullptr);
  // Pauses and resumes partitions by the in-flight limits. Returns true while the loop should hold:
  // a limit is reached but only for a moment, so it stops taking messages without pausing.
  bool update_flow_control();
  // Serves completions and dead-letter acks until `done()` or the deadline. Returns done().
  bool drain_until(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline);

  const PipelineOptions options_;
  connectors::Source& source_;
  connectors::DeadLetterSink& dead_letters_;
  WriterPool& writers_;
  const routing::RouteSet& routes_;
  PipelineObserver& observer_;
  NowMs now_ms_;
  // The wall clock (epoch ms) and the steady clock at the first event: TTL decisions tell a
  // wall-clock step from time passing with it (see handle()).
  std::optional<std::pair<std::int64_t, std::chrono::steady_clock::time_point>> clock_anchor_;

  event_formats::EventDecoder decoder_;
  event_formats::DecodedEvent event_;                    // reused: its buffers keep their capacity between events
  std::vector<event_formats::HeaderView> header_views_;  // the current message's headers, as decode() reads them
  std::string key_;
  routing::RowCells row_cells_;  // reused: the mapping's output for the current event
  // The tables each templated route made so far, bounded by its max_tables (a hostile producer
  // cannot make a million).
  std::map<const routing::Route*, std::set<std::string, std::less<>>> route_tables_;
  std::string table_problem_;  // why table_of() gave no table
  // Under ingest_time: the least stamp the next event gets (one past the last delete's), so a put
  // read after a delete of its row in the same millisecond is not masked by it.
  std::int64_t ingest_floor_ms_ = 0;
  Batcher batcher_;
  OffsetTracker tracker_;
  // Looked up per polled message: by TopicPartitionRef, without copying the topic.
  std::set<connectors::TopicPartition, connectors::TopicPartitionLess> assigned_;
  std::set<connectors::TopicPartition> paused_;  // by flow control
  // Partitions waiting for the schema registry (paused too, apart from flow control's paused_).
  struct SchemaHold {
    std::deque<connectors::SourceMessage> messages;  // the first one's schema is the one missing
    Backoff backoff{std::chrono::milliseconds(500), std::chrono::milliseconds(10000)};
    std::chrono::steady_clock::time_point next_try;
    std::chrono::steady_clock::time_point since;
  };
  std::map<connectors::TopicPartition, SchemaHold, connectors::TopicPartitionLess> schema_holds_;
  event_formats::DecodeFailure schema_wait_;  // the last decode that found the registry unavailable
  support::RateLimitedLog schema_log_{std::chrono::seconds(30)};
  // The row bounds last told to the observer (total, per partition).
  std::pair<std::size_t, std::size_t> reported_limits_{0, 0};
  // Since when a limit has been reached without pausing (update_flow_control()).
  std::optional<std::chrono::steady_clock::time_point> holding_since_;
  // Failed dead letters by the time of their next send.
  std::multimap<std::chrono::steady_clock::time_point, DeadLetterAttempt> dead_letter_retries_;
  // The first failure of every letter that failed and is not delivered yet (waiting or sent again).
  std::multiset<std::chrono::steady_clock::time_point> dead_letters_failing_since_;
  bool dead_letter_retries_reported_ = false;  // the gauges were last told about a failing letter
  std::chrono::steady_clock::time_point next_commit_;
  ShutdownBudget shutdown_{options_.shutdown_deadline};
  support::RateLimitedLog rejections_log_{std::chrono::seconds(10)};
  support::RateLimitedLog era_log_{std::chrono::seconds(10)};
  PipelineStats stats_;
};

}  // namespace hbingest::ingest
