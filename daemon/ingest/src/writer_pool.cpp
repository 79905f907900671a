#include "hbingest/ingest/writer_pool.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "hbingest/ingest/backoff.h"

namespace hbingest::ingest {

WriterPool::WriterPool(std::vector<std::unique_ptr<connectors::RowSink>> sinks, connectors::WriteOptions options,
                       RetryPolicy retry, PipelineObserver& observer)
    : options_(options), retry_(retry), observer_(observer), sinks_(std::move(sinks)) {
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

std::vector<BatchOutcome> WriterPool::take_completed() {
  std::lock_guard lock(mutex_);
  return std::exchange(completed_, {});
}

void WriterPool::wait_for_completion(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  completion_available_.wait_for(lock, timeout, [&] { return !completed_.empty() || stopping_; });
}

void WriterPool::run_writer(connectors::RowSink& sink) {
  Backoff backoff(retry_.initial_backoff, retry_.max_backoff);
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      work_available_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    backoff.reset();
    bool failing = false;  // this batch's last attempt failed: counted in failing_writers_
    for (;;) {
      const auto started = std::chrono::steady_clock::now();
      try {
        auto rejected = sink.write(batch.table, batch.rows, options_);
        std::int64_t oldest_event_ms = 0;
        for (const auto& row : batch.rows) {
          if (oldest_event_ms == 0 || row.timestamp_ms < oldest_event_ms) oldest_event_ms = row.timestamp_ms;
        }
        observer_.on_batch_written(sink.endpoint(), batch.rows.size() - rejected.size(), batch.bytes,
                                   std::chrono::steady_clock::now() - started, oldest_event_ms);
        if (!rejected.empty()) observer_.on_rows_rejected(rejected.size());
        if (std::exchange(failing, false)) --failing_writers_;
        {
          std::lock_guard lock(mutex_);
          completed_.push_back({std::move(batch), std::move(rejected)});
        }
        completion_available_.notify_all();
        break;
      } catch (const connectors::HBaseError& e) {
        observer_.on_write_retry(e.endpoint(), e.operation());
        const auto delay = backoff.next();
        retry_log_.log(spdlog::level::warn, e.endpoint(),
                       fmt::format("write of {} rows to {} failed (attempt {}), retrying in {} ms: {}",
                                   batch.rows.size(), batch.table, backoff.attempts(), delay.count(), e.what()));
        if (!std::exchange(failing, true)) ++failing_writers_;
        std::unique_lock lock(mutex_);
        if (stop_requested_cv_.wait_for(lock, delay, [&] { return stopping_; })) {
          --failing_writers_;
          return;  // not stored, not completed: its offsets stay uncommitted
        }
      }
    }
  }
}

}  // namespace hbingest::ingest
