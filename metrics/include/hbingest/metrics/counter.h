#pragma once
// A monotonically increasing value (events, bytes, errors). Names end in "_total".
//
// Thread safety: increment() and value() are lock-free and may be called from any thread.
// Ownership: counters live in their Family; the reference add() returns stays valid until the
// family's remove() of the same labels or the registry's destruction.

#include <atomic>

namespace hbingest::metrics {

class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `amount`; negative amounts are ignored (a counter never goes down).
  void increment(double amount = 1.0) noexcept {
    if (amount > 0) value_.fetch_add(amount, std::memory_order_relaxed);
  }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

}  // namespace hbingest::metrics
