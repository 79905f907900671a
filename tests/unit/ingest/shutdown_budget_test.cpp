#include "hbingest/ingest/shutdown_budget.h"

#include <gtest/gtest.h>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;
using Clock = ShutdownBudget::Clock;

TEST(ShutdownBudget, BeforeTheStopEveryStepGetsItsOwnCap) {
  const ShutdownBudget budget(30s);
  EXPECT_FALSE(budget.started());
  EXPECT_EQ(budget.left_for(ShutdownStep::commit, 30s), 30s);
  EXPECT_EQ(budget.end_of(ShutdownStep::drain), Clock::time_point::max());
}

TEST(ShutdownBudget, DrainLeavesTheLastQuarterToCommitAndLeave) {
  ShutdownBudget budget(20s);
  const auto t0 = Clock::time_point() + 1h;
  budget.start(t0);
  EXPECT_EQ(budget.end_of(ShutdownStep::drain), t0 + 15s);
  EXPECT_EQ(budget.end_of(ShutdownStep::commit), t0 + 17500ms);
  EXPECT_EQ(budget.end_of(ShutdownStep::leave), t0 + 20s);
  // A drain that used its whole share still leaves the commit 2.5 s and leaving the rest.
  EXPECT_EQ(budget.left_for(ShutdownStep::commit, 30s, t0 + 15s), 2500ms);
  EXPECT_EQ(budget.left_for(ShutdownStep::leave, 10s, t0 + 17500ms), 2500ms);
  // The caps still hold, and nothing is negative once a share is spent.
  EXPECT_EQ(budget.left_for(ShutdownStep::leave, 1s, t0), 1s);
  EXPECT_EQ(budget.left_for(ShutdownStep::drain, 30s, t0 + 19s), 0ms);
}

TEST(ShutdownBudget, TheReserveIsAtMostTenSeconds) {
  ShutdownBudget budget(10min);
  const auto t0 = Clock::time_point() + 1h;
  budget.start(t0);
  EXPECT_EQ(budget.end_of(ShutdownStep::drain), t0 + 10min - 10s);
}

TEST(ShutdownBudget, ALaterStartKeepsTheFirst) {
  ShutdownBudget budget(4s);
  const auto t0 = Clock::time_point() + 1h;
  budget.start(t0);
  budget.start(t0 + 3s);
  EXPECT_EQ(budget.end_of(ShutdownStep::leave), t0 + 4s);
}

}  // namespace
}  // namespace hbingest::ingest
