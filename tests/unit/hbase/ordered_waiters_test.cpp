// OrderedWaiters (connectors/hbase/src/ordered_waiters.h): the scanner pool's callers get freed
// connections lowest priority first, then in arrival order; nobody is lost or let through twice.
#include "ordered_waiters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace hbingest::connectors::detail {
namespace {

using namespace std::chrono_literals;

// A pool of `free` units behind one mutex, as the scanner pool's connections are.
struct Units {
  std::mutex mutex;
  OrderedWaiters waiters;
  int free = 0;
  std::vector<std::uint64_t> served;  // the tags of the callers served, in order

  void take(std::uint64_t priority, std::uint64_t tag) {
    std::unique_lock lock(mutex);
    waiters.wait(lock, priority, [&] { return free > 0; });
    --free;
    served.push_back(tag);
  }
  void give() {
    const std::lock_guard lock(mutex);
    ++free;
    waiters.notify_locked();
  }
  bool waiting(std::size_t n) {
    const std::lock_guard lock(mutex);
    return waiters.waiting() == n;
  }
};

// Blocks until `n` callers wait (a bound only against a hang).
void until_waiting(Units& units, std::size_t n) {
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (!units.waiting(n)) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "never " << n << " waiting";
    std::this_thread::sleep_for(1ms);
  }
}

TEST(OrderedWaiters, WithAUnitFreeAndNobodyWaitingACallerGoesOnAtOnce) {
  Units units;
  units.free = 1;
  units.take(7, 1);
  EXPECT_EQ(units.served, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(units.free, 0);
}

TEST(OrderedWaiters, FreedUnitsGoToTheLowestPriorityFirstThenInArrivalOrder) {
  Units units;
  std::vector<std::thread> callers;
  // Arrival order: priorities 3, 1, 2, 1 (tags 30, 10, 20, 11): served 10, 11, 20, 30.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> arrivals = {{3, 30}, {1, 10}, {2, 20}, {1, 11}};
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    callers.emplace_back([&units, a = arrivals[i]] { units.take(a.first, a.second); });
    until_waiting(units, i + 1);  // each arrives after the ones before it
  }
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    units.give();
    until_waiting(units, arrivals.size() - i - 1);  // one unit: exactly one caller went on
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(units.served, (std::vector<std::uint64_t>{10, 11, 20, 30}));
  EXPECT_EQ(units.free, 0);
}

TEST(OrderedWaiters, SeveralUnitsFreedAtOnceLetAsManyCallersThrough) {
  Units units;
  std::vector<std::thread> callers;
  for (std::uint64_t i = 0; i < 3; ++i) {
    callers.emplace_back([&units, i] { units.take(i, i); });
    until_waiting(units, i + 1);
  }
  {
    const std::lock_guard lock(units.mutex);
    units.free = 3;                 // a burst freed at once, one notification
    units.waiters.notify_locked();  // each caller let through wakes the next
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(units.served, (std::vector<std::uint64_t>{0, 1, 2}));
}

TEST(OrderedWaiters, ManyCallersOverFewUnitsAreEachServedOnce) {
  Units units;
  units.free = 2;
  std::vector<std::thread> callers;
  for (std::uint64_t t = 0; t < 8; ++t) {
    callers.emplace_back([&units, t] {
      for (std::uint64_t i = 0; i < 200; ++i) {
        units.take(t % 3, t * 1000 + i);
        units.give();
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(units.served.size(), 8u * 200u);
  EXPECT_EQ(units.free, 2);
  EXPECT_TRUE(units.waiting(0));
}

}  // namespace
}  // namespace hbingest::connectors::detail
