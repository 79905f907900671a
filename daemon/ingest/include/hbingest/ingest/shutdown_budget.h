#pragma once
// One time budget for the whole way out: draining the open batches and in-flight writes, the final
// synchronous commit, leaving the consumer group and flushing the dead-letter producer all come
// out of `shutdown_deadline`, counted from the moment the stop is seen. Each step used to have a
// fresh timeout of its own (≈130 s in all against a 45 s grace period), so SIGKILL could cut the
// final commit. The deploy files keep TimeoutStopSec / terminationGracePeriodSeconds above the
// budget plus the backstop grace (app/signals.h).
//
// The last quarter of the budget (at most 10 s) is kept from draining, so that a drain waiting on
// a dead gateway still leaves time to commit what is stored and to leave the group; of that
// reserve, the first half is the commit's, the rest is leaving's.
//
// Not thread-safe: owned by the pipeline thread.

#include <chrono>
#include <optional>

namespace hbingest::ingest {

enum class ShutdownStep { drain, commit, leave };

class ShutdownBudget {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ShutdownBudget(std::chrono::milliseconds total) : total_(total) {}

  // Starts the clock; later calls keep the first start.
  void start(Clock::time_point now = Clock::now()) {
    if (!deadline_) deadline_ = now + total_;
  }
  bool started() const { return deadline_.has_value(); }
  std::chrono::milliseconds total() const { return total_; }

  // When `step` must be over. Before start(): never.
  Clock::time_point end_of(ShutdownStep step) const;
  // How long `step` may still wait: `cap` before start(), afterwards at most what is left of its
  // share (never negative).
  std::chrono::milliseconds left_for(ShutdownStep step, std::chrono::milliseconds cap,
                                     Clock::time_point now = Clock::now()) const;

 private:
  std::chrono::milliseconds total_;
  std::optional<Clock::time_point> deadline_;
};

}  // namespace hbingest::ingest
