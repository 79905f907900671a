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

  // min(cap, initial * 2^attempt), attempt counted from 0: the delay before retry attempt + 1
  // without jitter (the dead-letter retries use it as it is, see Pipeline).
  static std::chrono::milliseconds ceiling(std::chrono::milliseconds initial, std::chrono::milliseconds cap,
                                           int attempt) {
    const auto shift = std::clamp(attempt, 0, 20);
    return std::chrono::milliseconds(std::min<std::int64_t>(cap.count(), initial.count() << shift));
  }

  std::chrono::milliseconds next() {
    const auto limit = ceiling(initial_, cap_, attempt_);
    ++attempt_;
    std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(limit.count(), 1));
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
