#pragma once
// N writer threads, each with its own RowSink (connection), taking closed batches from one queue.
// A batch is retried with backoff until stored or until stop(); completed batches (with the rows
// HBase rejected for good) come back through take_completed() on the pipeline thread.
// The queue is unbounded by count: the pipeline bounds it by pausing consumption at its in-flight
// row/byte limits.
// How many batches are sent at once is the DepthController's depth (at most one per writer): the
// other writers wait. A batch whose write failed leaves the depth while it backs off (it is retried
// on its own writer all the same, once there is room again), so a table held by the table watch or
// a failing gateway does not take the depth from the batches that can be written.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "hbingest/connectors/row_sink.h"
#include "hbingest/ingest/batcher.h"
#include "hbingest/ingest/depth_controller.h"
#include "hbingest/ingest/pipeline_observer.h"
#include "hbingest/support/gateway_share.h"
#include "hbingest/support/rate_limited_log.h"

namespace hbingest::ingest {

struct BatchOutcome {
  Batch batch;
  std::vector<connectors::RejectedRow> rejected;
};

// What the writers know about their tables beyond their own calls (TableWatch implements it).
// Both methods are called from writer threads: cheap, thread-safe, never throwing.
class TableGate {
 public:
  virtual ~TableGate() = default;
  // False while `table` is known to be missing, disabled or without its family. A writer then
  // holds the batch (backing off, counted as failing) instead of sending puts that cannot succeed:
  // into a disabled table each would occupy a gateway handler for minutes (HBase's client retries).
  virtual bool writable(const std::string& table) const = 0;
  // A write to `table` failed: the gate may want to look at the table now.
  virtual void write_failed(const std::string& table) = 0;
};

struct RetryPolicy {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
};

class WriterPool {
 public:
  // `gate` (optional) must outlive the pool.
  // `depth`: the controller's tuning; its max_depth is the number of sinks.
  // `share` (optional, must outlive the pool): while the daemon's queries run, the writers send at
  // most share->writer_batches(depth) batches at once (one at least), leaving the gateways to the
  // queries' scans.
  WriterPool(std::vector<std::unique_ptr<connectors::RowSink>> sinks, connectors::WriteOptions options,
             RetryPolicy retry, PipelineObserver& observer, TableGate* gate = nullptr,
             DepthControllerOptions depth = {}, support::GatewayShare* share = nullptr);
  // Stops and joins; batches not yet stored are dropped (their offsets were never committed).
  ~WriterPool();
  WriterPool(const WriterPool&) = delete;
  WriterPool& operator=(const WriterPool&) = delete;

  void submit(Batch batch);
  std::vector<BatchOutcome> take_completed();
  // Blocks until a batch completes or `timeout` passes.
  void wait_for_completion(std::chrono::milliseconds timeout);
  // Stops retrying and joins the writers. Idempotent.
  void stop();
  // True from a writer's first failed attempt until its next success, across the retries and the
  // time spent inside the failing calls (for readiness).
  bool writes_failing() const { return failing_writers_.load() > 0; }
  // What the depth controller saw last (any thread).
  FlowEstimate estimate() const;

 private:
  void run_writer(connectors::RowSink& sink);
  // Under mutex_: the depth, and the gateway share while a query runs, let one more batch go out.
  bool may_start_batch_locked() const;
  // Counts this writer as failing (until its next success) and sleeps `delay`, woken by stop();
  // false when stopping.
  bool wait_before_retry(std::chrono::milliseconds delay, bool& failing);
  // Counts the writer's batch out of (or back into) the batches being sent.
  void leave_depth();
  // Waits for room in the depth (and the share) as a batch from the queue does; false when
  // stopping.
  bool enter_depth();
  // Counts and logs (rate-limited) a write that threw something other than HBaseError.
  void report_unexpected_failure(const connectors::RowSink& sink, const Batch& batch, int attempt,
                                 std::chrono::milliseconds delay) noexcept;

  connectors::WriteOptions options_;
  RetryPolicy retry_;
  PipelineObserver& observer_;
  TableGate* gate_;
  support::GatewayShare* share_;
  std::vector<std::unique_ptr<connectors::RowSink>> sinks_;

  mutable std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable completion_available_;
  std::condition_variable stop_requested_cv_;  // wakes writers sleeping in backoff
  std::deque<Batch> queue_;
  std::vector<BatchOutcome> completed_;
  bool stopping_ = false;
  DepthController depth_;
  std::size_t in_flight_ = 0;   // batches taken by a writer and not backing off
  std::size_t reentering_ = 0;  // batches back from their backoff, waiting for room in the depth
  FlowEstimate estimate_;       // a copy of depth_.estimate() for other threads, under mutex_
  std::atomic<int> failing_writers_{0};
  support::RateLimitedLog retry_log_{std::chrono::seconds(5)};  // one line per endpoint and interval in an outage
  // Wakes the writers held back by the share when its last query ends; after mutex_ and
  // work_available_ (which it uses), so it is gone before they are.
  support::GatewayShare::Subscription share_raised_;
  // Last member: threads start after everything they use exists and are joined (in stop()) first.
  std::vector<std::thread> threads_;
};

}  // namespace hbingest::ingest
