#include "hbingest/ingest/shutdown_budget.h"

#include <algorithm>

namespace hbingest::ingest {

namespace {

constexpr std::chrono::milliseconds kMaxReserve{10000};

}  // namespace

ShutdownBudget::Clock::time_point ShutdownBudget::end_of(ShutdownStep step) const {
  if (!deadline_) return Clock::time_point::max();
  const auto reserve = std::min(total_ / 4, kMaxReserve);
  switch (step) {
    case ShutdownStep::drain:
      return *deadline_ - reserve;
    case ShutdownStep::commit:
      return *deadline_ - reserve / 2;
    case ShutdownStep::leave:
      break;
  }
  return *deadline_;
}

std::chrono::milliseconds ShutdownBudget::left_for(ShutdownStep step, std::chrono::milliseconds cap,
                                                   Clock::time_point now) const {
  if (!deadline_) return cap;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end_of(step) - now);
  return std::clamp(left, std::chrono::milliseconds(0), std::max(cap, std::chrono::milliseconds(0)));
}

}  // namespace hbingest::ingest
