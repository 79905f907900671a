#include "parallel_scans.h"

#include <algorithm>
#include <utility>

#include "hbingest/query/query.h"

namespace hbingest::query::detail {

ParallelScans::ParallelScans(std::vector<connectors::ScanRequest> requests, ScannerOpener opener, int concurrency,
                             int prefetch_chunks, std::size_t window, bool on_demand, Clock::time_point deadline)
    : opener_(std::move(opener)),
      prefetch_(static_cast<std::size_t>(std::max(1, prefetch_chunks))),
      window_(std::max<std::size_t>(1, window)),
      on_demand_(on_demand),
      deadline_(deadline) {
  ranges_.reserve(requests.size());
  for (auto& request : requests) {
    ranges_.emplace_back().request = std::move(request);
  }
  const auto threads = std::min<std::size_t>(ranges_.size(), static_cast<std::size_t>(std::max(1, concurrency)));
  workers_.reserve(threads);
  try {
    for (std::size_t t = 0; t < threads; ++t) {
      workers_.emplace_back([this] { work(); });
    }
  } catch (...) {
    // Thread creation failed part-way: the destructor will not run, so stop the ones started.
    {
      const std::lock_guard lock(mutex_);
      cancel_locked();
    }
    for (auto& worker : workers_) worker.join();
    throw;
  }
}

ParallelScans::~ParallelScans() {
  {
    const std::lock_guard lock(mutex_);
    cancel_locked();
  }
  for (auto& worker : workers_) worker.join();
  // ranges_ (and with them the scanners still open) are destroyed after this body: all closed.
}

void ParallelScans::cancel_locked() {
  cancelled_ = true;
  // A worker inside a call would otherwise hold the destructor (and the query) until the call's
  // own timeout (hbase.read_timeout): a deadline past, an error or a finished merge ends the calls.
  for (Range& range : ranges_) {
    if (range.in_flight && range.scanner) range.scanner->cancel();
  }
  work_cv_.notify_all();
  ready_cv_.notify_all();
}

std::size_t ParallelScans::pick_locked() const {
  std::size_t best = ranges_.size();
  const std::size_t end = std::min(ranges_.size(), first_unfinished_ + window_);
  for (std::size_t i = first_unfinished_; i < end; ++i) {
    const Range& r = ranges_[i];
    if (r.in_flight || r.exhausted || r.finished || r.queue.size() >= prefetch_) continue;
    if (on_demand_ && !r.wanted) continue;
    if (best == ranges_.size() || r.queue.size() < ranges_[best].queue.size()) best = i;
  }
  return best;
}

bool ParallelScans::all_done_locked() const {
  return std::all_of(ranges_.begin(), ranges_.end(), [](const Range& r) { return r.exhausted || r.finished; });
}

void ParallelScans::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    std::size_t i = ranges_.size();
    work_cv_.wait(lock, [&] {
      if (cancelled_ || all_done_locked()) return true;
      i = pick_locked();
      return i < ranges_.size();
    });
    if (cancelled_ || i >= ranges_.size()) return;

    Range& range = ranges_[i];
    range.in_flight = true;
    range.wanted = false;
    const bool needs_open = range.scanner == nullptr;
    if (needs_open) ++opened_;
    lock.unlock();

    std::vector<connectors::ScannedRow> chunk;
    std::exception_ptr failure;
    try {
      if (needs_open) {
        auto scanner = opener_(range.request);
        // Published under the lock: cancel_locked() may interrupt its calls from now on.
        const std::lock_guard publish(mutex_);
        range.scanner = std::move(scanner);
      }
      chunk = range.scanner->next_chunk();
    } catch (...) {
      failure = std::current_exception();
    }

    lock.lock();
    // Close as soon as the scanner knows the range is over (no call spent to learn it), or when
    // nobody will read this range any more: outside the lock, still in flight so that no other
    // worker picks the range meanwhile.
    const bool last = !failure && (chunk.empty() || range.scanner->exhausted());
    if (failure || last || range.finished || cancelled_) {
      auto scanner = std::move(range.scanner);
      lock.unlock();
      scanner.reset();
      lock.lock();
    }
    range.in_flight = false;
    if (failure) {
      // A call interrupted by cancel_locked() fails too; the first real error is the one to report.
      if (!error_ && !cancelled_) error_ = failure;
      cancel_locked();
      return;
    }
    if (!range.finished && !cancelled_) {
      if (!chunk.empty()) range.queue.push_back(std::move(chunk));
      if (last) range.exhausted = true;
    }
    ready_cv_.notify_all();
    // Another range may have become ready while this worker was busy.
    work_cv_.notify_one();
  }
}

std::vector<connectors::ScannedRow> ParallelScans::next(std::size_t i) {
  std::unique_lock lock(mutex_);
  Range& range = ranges_.at(i);
  if (range.queue.empty()) want_locked(range);
  const bool ready = ready_cv_.wait_until(
      lock, deadline_, [&] { return error_ != nullptr || cancelled_ || !range.queue.empty() || range.exhausted; });
  if (error_) std::rethrow_exception(error_);
  if (!ready) {
    cancel_locked();
    throw QueryTimeout("query deadline passed while waiting for scan " + std::to_string(i) + " of " +
                       std::to_string(ranges_.size()) + " (table " + range.request.table + ")");
  }
  if (!range.queue.empty()) {
    auto chunk = std::move(range.queue.front());
    range.queue.pop_front();
    work_cv_.notify_one();
    return chunk;
  }
  if (range.exhausted) return {};
  // cancelled_ without an error: only the destructor cancels, so the merge is not waiting.
  throw QueryError("scan " + std::to_string(i) + " was cancelled");
}

void ParallelScans::want_locked(Range& range) {
  if (!on_demand_ || range.in_flight || range.exhausted || range.finished || range.wanted) return;
  range.wanted = true;
  work_cv_.notify_one();
}

void ParallelScans::prefetch(std::size_t i) {
  const std::lock_guard lock(mutex_);
  want_locked(ranges_.at(i));
}

void ParallelScans::finished(std::size_t i) {
  std::unique_ptr<connectors::RowScanner> to_close;
  {
    const std::lock_guard lock(mutex_);
    Range& range = ranges_.at(i);
    range.finished = true;
    range.queue.clear();
    if (!range.in_flight) to_close = std::move(range.scanner);
    while (first_unfinished_ < ranges_.size() && (ranges_[first_unfinished_].finished)) {
      ++first_unfinished_;
    }
    work_cv_.notify_all();
  }
  // to_close's destructor closes the scanner here, outside the lock.
}

std::size_t ParallelScans::opened() const {
  const std::lock_guard lock(mutex_);
  return opened_;
}

}  // namespace hbingest::query::detail
