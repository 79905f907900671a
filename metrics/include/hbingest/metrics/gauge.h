#pragma once
// A value that goes up and down (in-flight rows, paused partitions, lag).
//
// Thread safety: every method is lock-free and may be called from any thread. Ownership as for
// Counter. For values that live elsewhere (consumer lag) see Family<Gauge>::add_callback().

#include <atomic>

namespace hbingest::metrics {

class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void increment(double amount = 1.0) noexcept { value_.fetch_add(amount, std::memory_order_relaxed); }
  void decrement(double amount = 1.0) noexcept { value_.fetch_sub(amount, std::memory_order_relaxed); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

}  // namespace hbingest::metrics
