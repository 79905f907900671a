#include "hbingest/metrics/histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hbingest::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i])) {
      throw std::invalid_argument("histogram bucket bound #" + std::to_string(i) + " is not finite (+Inf is implicit)");
    }
    if (i > 0 && !(bounds_[i - 1] < bounds_[i])) {
      throw std::invalid_argument("histogram bucket bounds must be strictly increasing (bound #" + std::to_string(i) + ")");
    }
  }
}

void Histogram::observe(double value) noexcept {
  if (std::isnan(value)) return;
  const auto index = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  buckets_[index].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot snap;
  snap.cumulative.resize(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    snap.cumulative[i] = running;
  }
  snap.count = running;
  snap.sum = sum_.load(std::memory_order_relaxed);
  return snap;
}

std::vector<double> Histogram::exponential_buckets(double start, double factor, std::size_t count) {
  if (!(start > 0) || !(factor > 1)) throw std::invalid_argument("exponential_buckets needs start > 0 and factor > 1");
  std::vector<double> bounds;
  double bound = start;
  for (std::size_t i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

std::vector<double> Histogram::linear_buckets(double start, double width, std::size_t count) {
  if (!(width > 0)) throw std::invalid_argument("linear_buckets needs width > 0");
  std::vector<double> bounds;
  for (std::size_t i = 0; i < count; ++i) bounds.push_back(start + width * static_cast<double>(i));
  return bounds;
}

}  // namespace hbingest::metrics
