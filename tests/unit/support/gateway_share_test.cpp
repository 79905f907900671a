// GatewayShare: queries counted while registered; the writers' batches limited while any runs,
// never below one; listeners told when the last query ends, and never after they unsubscribed.
#include "hbingest/support/gateway_share.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace hbingest::support {
namespace {

TEST(GatewayShare, WritersHaveWhatTheyWantWhileNoQueryRuns) {
  const GatewayShare share(1);
  EXPECT_EQ(share.running_queries(), 0);
  EXPECT_EQ(share.writer_batches(4), 4);
  EXPECT_EQ(share.writer_batches(64), 64);
}

TEST(GatewayShare, WhileAQueryRunsTheWritersKeepTheirShareAndNeverFewerThanOne) {
  GatewayShare share(2);
  {
    const auto query = share.register_query();
    EXPECT_EQ(share.running_queries(), 1);
    EXPECT_EQ(share.writer_batches(4), 2);
    EXPECT_EQ(share.writer_batches(1), 1);  // the share is a bound, not a floor above what they want
    EXPECT_EQ(share.writer_batches(0), 1);  // ingest never stops, whatever it is asked
    EXPECT_EQ(share.writer_batches(-5), 1);
  }
  EXPECT_EQ(share.running_queries(), 0);
  EXPECT_EQ(share.writer_batches(4), 4);
  EXPECT_EQ(share.writer_batches(0), 1);
}

TEST(GatewayShare, AShareThatWouldStopIngestIsRefused) {
  EXPECT_THROW(GatewayShare(0), std::invalid_argument);
  EXPECT_THROW(GatewayShare(-1), std::invalid_argument);
}

TEST(GatewayShare, RegistrationsCountOnceHoweverTheyAreMoved) {
  GatewayShare share(1);
  auto a = share.register_query();
  auto b = share.register_query();
  EXPECT_EQ(share.running_queries(), 2);
  GatewayShare::Registration moved(std::move(a));
  EXPECT_EQ(share.running_queries(), 2);
  b = std::move(moved);  // b's own query ends; moved's goes on in b
  EXPECT_EQ(share.running_queries(), 1);
  b = GatewayShare::Registration{};
  EXPECT_EQ(share.running_queries(), 0);
  { const GatewayShare::Registration empty; }  // counts nothing, releases nothing
  EXPECT_EQ(share.running_queries(), 0);
}

TEST(GatewayShare, ListenersAreCalledWhenTheLastQueryEndsAndNotAfterUnsubscribing) {
  GatewayShare share(1);
  int calls = 0;
  auto subscription = share.subscribe([&] { ++calls; });
  {
    const auto first = share.register_query();
    { const auto second = share.register_query(); }
    EXPECT_EQ(calls, 0) << "a query still runs: the limit has not risen";
  }
  EXPECT_EQ(calls, 1);
  auto moved = std::move(subscription);
  { const auto query = share.register_query(); }
  EXPECT_EQ(calls, 2) << "a moved subscription keeps calling";
  moved = GatewayShare::Subscription{};
  { const auto query = share.register_query(); }
  EXPECT_EQ(calls, 2) << "called after its subscription was gone";
}

TEST(GatewayShare, AFailingListenerDoesNotKeepTheOthersFromBeingCalled) {
  GatewayShare share(1);
  int calls = 0;
  const auto failing = share.subscribe([] { throw std::runtime_error("listener failed"); });
  const auto counting = share.subscribe([&] { ++calls; });
  { const auto query = share.register_query(); }
  EXPECT_EQ(calls, 1);
}

TEST(GatewayShare, ConcurrentQueriesAllCountAndAllEnd) {
  GatewayShare share(1);
  std::atomic<int> raised{0};
  const auto subscription = share.subscribe([&] { ++raised; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const auto query = share.register_query();
        EXPECT_GE(share.running_queries(), 1);
        EXPECT_EQ(share.writer_batches(4), 1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(share.running_queries(), 0);
  EXPECT_EQ(share.writer_batches(4), 4);
  EXPECT_GE(raised.load(), 1) << "the last query to end told the listener";
}

}  // namespace
}  // namespace hbingest::support
