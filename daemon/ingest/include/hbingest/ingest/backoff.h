#pragma once
// Capped exponential backoff with full jitter: sleep = uniform(0, min(cap, initial * 2^attempt)).
// Full jitter keeps N writers that failed together from retrying together.

#include <algorithm>
#include <chrono>
#include <random>

namespace hbingest::ingest {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap, std::uint64_t seed = std::random_device{}())
      : initial_(initial), cap_(cap), rng_(seed) {}

  std::chrono::milliseconds next() {
    const auto shift = std::min(attempt_, 20);
    const auto ceiling = std::min<std::int64_t>(cap_.count(), initial_.count() << shift);
    ++attempt_;
    std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(ceiling, 1));
    return std::chrono::milliseconds(jitter(rng_));
  }
  void reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds cap_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
};

}  // namespace hbingest::ingest
