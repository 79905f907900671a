#pragma once
// A distribution over fixed bucket upper bounds (latencies, batch sizes). Exposed as cumulative
// `_bucket{le=...}` series plus `+Inf`, `_sum` and `_count`.
//
// Thread safety: observe() is lock-free (one atomic add per bucket and sum); snapshot() may run
// concurrently and is consistent per field: `count` is the sum of the buckets it read, so the
// +Inf bucket always equals _count. Ownership as for Counter.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace hbingest::metrics {

class Histogram {
 public:
  // `bounds`: finite, strictly increasing upper bounds (the +Inf bucket is implicit). Throws
  // std::invalid_argument otherwise.
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Counts `value` in the first bucket whose bound is >= value. NaN is dropped.
  void observe(double value) noexcept;

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;
  const std::vector<double>& bounds() const noexcept { return bounds_; }

  // Bucket helpers: `count` bounds start, start*factor, ... / start, start+width, ...
  static std::vector<double> exponential_buckets(double start, double factor, std::size_t count);
  static std::vector<double> linear_buckets(double start, double width, std::size_t count);

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<double> sum_{0.0};
};

}  // namespace hbingest::metrics
