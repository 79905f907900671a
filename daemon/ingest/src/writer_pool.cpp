#include "hbingest/ingest/writer_pool.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "hbingest/ingest/backoff.h"

namespace hbingest::ingest {

namespace {

constexpr std::chrono::milliseconds kHeldBatchRecheck{500};

// What the exception being handled says about itself; never throws.
std::string describe_current_exception() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace

WriterPool::WriterPool(std::vector<std::unique_ptr<connectors::RowSink>> sinks, connectors::WriteOptions options,
                       RetryPolicy retry, PipelineObserver& observer, TableGate* gate, DepthControllerOptions depth,
                       support::GatewayShare* share)
    : options_(options),
      retry_(retry),
      observer_(observer),
      gate_(gate),
      share_(share),
      sinks_(std::move(sinks)),
      depth_(
          [&] {
            depth.max_depth = sinks_.size();
            return depth;
          }(),
          std::chrono::steady_clock::now()),
      estimate_(depth_.estimate()) {
  observer_.on_writer_depth(depth_.depth());
  if (share_ != nullptr) {
    share_raised_ = share_->subscribe([this] {
      { const std::lock_guard lock(mutex_); }  // a writer between its check and its wait is waiting now
      work_available_.notify_all();
    });
  }
  threads_.reserve(sinks_.size());
  for (auto& sink : sinks_) {
    threads_.emplace_back([this, &sink] { run_writer(*sink); });
  }
}

WriterPool::~WriterPool() { stop(); }

void WriterPool::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  work_available_.notify_all();
  stop_requested_cv_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

void WriterPool::submit(Batch batch) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(batch));
  }
  work_available_.notify_one();
}

FlowEstimate WriterPool::estimate() const {
  std::lock_guard lock(mutex_);
  return estimate_;
}

void WriterPool::leave_depth() {
  bool reentering = false;
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
    reentering = reentering_ > 0;
  }
  // A batch waiting in the queue may go in its place, or one back from its backoff: those wait
  // for room alone (not for the queue), so one woken for the other kind would not go.
  if (reentering) {
    work_available_.notify_all();
  } else {
    work_available_.notify_one();
  }
}

bool WriterPool::enter_depth() {
  std::unique_lock lock(mutex_);
  ++reentering_;
  work_available_.wait(lock, [&] { return stopping_ || may_start_batch_locked(); });
  --reentering_;
  if (stopping_) return false;
  ++in_flight_;
  depth_.on_send(in_flight_);
  return true;
}

std::vector<BatchOutcome> WriterPool::take_completed() {
  std::lock_guard lock(mutex_);
  return std::exchange(completed_, {});
}

void WriterPool::wait_for_completion(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  completion_available_.wait_for(lock, timeout, [&] { return !completed_.empty() || stopping_; });
}

bool WriterPool::wait_before_retry(std::chrono::milliseconds delay, bool& failing) {
  if (!std::exchange(failing, true)) ++failing_writers_;
  std::unique_lock lock(mutex_);
  if (!stop_requested_cv_.wait_for(lock, delay, [&] { return stopping_; })) return true;
  failing = false;
  --failing_writers_;
  return false;
}

void WriterPool::report_unexpected_failure(const connectors::RowSink& sink, const Batch& batch, int attempt,
                                           std::chrono::milliseconds delay) noexcept {
  // Called from a catch (...) block: reporting must not throw again (out of memory, say), or the
  // thread would still die.
  try {
    const std::string endpoint = sink.endpoint();
    observer_.on_write_unexpected_error(endpoint);
    observer_.on_write_retry(endpoint, "putMultiple");
    retry_log_.log(spdlog::level::err, "unexpected:" + endpoint,
                   fmt::format("write of {} rows to {} failed unexpectedly (attempt {}), retrying in {} ms: {}",
                               batch.rows.size(), batch.table, attempt, delay.count(), describe_current_exception()));
  } catch (...) {
  }
}

bool WriterPool::may_start_batch_locked() const {
  const auto depth = depth_.depth();
  if (share_ == nullptr) return in_flight_ < depth;
  return in_flight_ < static_cast<std::size_t>(share_->writer_batches(static_cast<int>(depth)));
}

void WriterPool::run_writer(connectors::RowSink& sink) {
  Backoff backoff(retry_.initial_backoff, retry_.max_backoff);
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      work_available_.wait(lock, [&] { return stopping_ || (!queue_.empty() && may_start_batch_locked()); });
      if (stopping_) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
      ++in_flight_;
      depth_.on_send(in_flight_);
    }
    backoff.reset();
    bool failing = false;  // this batch's last attempt failed: counted in failing_writers_
    bool in_depth = true;  // counted in in_flight_ (not while it backs off)
    const auto back_off = [&](std::chrono::milliseconds delay) {
      if (std::exchange(in_depth, false)) leave_depth();
      return wait_before_retry(delay, failing);
    };
    for (;;) {
      if (gate_ != nullptr && !gate_->writable(batch.table)) {
        // Known to fail (missing table or family) or, for a disabled table, to tie up a gateway
        // handler for minutes: hold the batch, as if the attempt had failed, and ask again. Asking
        // costs nothing, so a long backoff does not delay the resumption.
        if (!back_off(std::min(backoff.next(), kHeldBatchRecheck))) return;
        continue;
      }
      if (!in_depth) {
        // Back from its backoff: it waits for room like a batch from the queue, or it would go out
        // beside the ones that took its place (more than the depth, and the share while a query runs).
        if (!enter_depth()) {  // stopping: not stored, its offsets stay uncommitted
          if (std::exchange(failing, false)) --failing_writers_;
          return;
        }
        in_depth = true;
      }
      const auto started = std::chrono::steady_clock::now();
      try {
        auto rejected = sink.write(batch.table, batch.rows, options_);
        const auto finished = std::chrono::steady_clock::now();
        std::int64_t oldest_event_ms = 0;
        for (const auto& row : batch.rows) {
          if (oldest_event_ms == 0 || row.timestamp_ms < oldest_event_ms) oldest_event_ms = row.timestamp_ms;
        }
        observer_.on_batch_written(sink.endpoint(), batch.rows.size() - rejected.size(), batch.bytes,
                                   finished - started, oldest_event_ms);
        if (!rejected.empty()) observer_.on_rows_rejected(rejected.size());
        if (std::exchange(failing, false)) --failing_writers_;
        bool depth_changed = false;
        bool reentering = false;
        std::size_t depth = 0;
        {
          std::lock_guard lock(mutex_);
          --in_flight_;
          depth_changed = depth_.on_ack(batch.rows.size(), finished - started, finished);
          depth = depth_.depth();
          estimate_ = depth_.estimate();
          completed_.push_back({std::move(batch), std::move(rejected)});
          reentering = reentering_ > 0;
        }
        if (depth_changed) observer_.on_writer_depth(depth);
        // A deeper pipeline: waiting writers may start. A batch back from its backoff may take the
        // room this one left (this writer goes on to the queue by itself).
        if (depth_changed || reentering) work_available_.notify_all();
        completion_available_.notify_all();
        break;
      } catch (const connectors::HBaseError& e) {
        if (gate_ != nullptr) gate_->write_failed(batch.table);
        observer_.on_write_retry(e.endpoint(), e.operation());
        const auto delay = backoff.next();
        retry_log_.log(spdlog::level::warn, e.endpoint(),
                       fmt::format("write of {} rows to {} failed (attempt {}), retrying in {} ms: {}",
                                   batch.rows.size(), batch.table, backoff.attempts(), delay.count(), e.what()));
        if (!back_off(delay)) return;  // not stored, not completed: its offsets stay uncommitted
      } catch (...) {
        // Anything else is a bug in a sink or an allocation failure (std::bad_alloc). Letting it
        // escape would std::terminate the daemon; the batch is still whole, so it takes the retry
        // path like an HBase failure, counted apart so that it can alert.
        const auto delay = backoff.next();
        report_unexpected_failure(sink, batch, backoff.attempts(), delay);
        if (!back_off(delay)) return;
      }
    }
  }
}

}  // namespace hbingest::ingest
