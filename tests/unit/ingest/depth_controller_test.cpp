// DepthController over a fake clock and a model gateway: `capacity` batches are worked on at once,
// each for `service`; more wait in its queue. The depth must find the capacity from latency and
// throughput alone, from above and from below, follow it when it moves, and stay in its bounds.

#include "hbingest/ingest/depth_controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;
using Clock = DepthController::Clock;

constexpr std::size_t kBatchRows = 500;

// A gateway with `capacity` handlers, as a fluid: up to the capacity a batch takes `service`;
// beyond it the handlers are shared, so each batch takes service × depth / capacity and the
// throughput stays at the capacity's.
struct ModelGateway {
  std::size_t capacity;
  Clock::duration service;

  Clock::duration latency(std::size_t depth) const {
    const double share = std::max(1.0, static_cast<double>(depth) / static_cast<double>(capacity));
    return std::chrono::duration_cast<Clock::duration>(service * share);
  }
};

// Sends `depth` batches, lets the clock run for their latency, acknowledges them; `rounds` times.
// Returns the depths seen after each round.
std::vector<std::size_t> drive(DepthController& controller, const ModelGateway& gateway, Clock::time_point& now,
                               int rounds) {
  std::vector<std::size_t> seen;
  for (int r = 0; r < rounds; ++r) {
    const std::size_t depth = controller.depth();
    for (std::size_t i = 1; i <= depth; ++i) controller.on_send(i);
    const auto latency = gateway.latency(depth);
    now += latency;
    for (std::size_t i = 0; i < depth; ++i) controller.on_ack(kBatchRows, latency, now);
    seen.push_back(controller.depth());
  }
  return seen;
}

DepthControllerOptions options(std::size_t max_depth, std::size_t initial) {
  DepthControllerOptions o;
  o.max_depth = max_depth;
  o.initial_depth = initial;
  o.window = 100ms;
  return o;
}

// The depths of the last `n` rounds.
std::pair<std::size_t, std::size_t> settled(const std::vector<std::size_t>& seen, std::size_t n) {
  const auto tail = seen.end() - static_cast<long>(std::min(n, seen.size()));
  return {*std::min_element(tail, seen.end()), *std::max_element(tail, seen.end())};
}

TEST(DepthController, GrowsFromOneToTheGatewaysCapacityWhileThroughputGrows) {
  Clock::time_point now{};
  DepthController controller(options(32, 1), now);
  const ModelGateway gateway{6, 30ms};
  const auto seen = drive(controller, gateway, now, 400);
  const auto [low, high] = settled(seen, 100);
  // It probes one above the capacity (latency rises, nothing gained) and comes back.
  EXPECT_GE(low, 5u);
  EXPECT_LE(high, 8u);
  // Throughput at the settled depth is the gateway's (within a batch round of it).
  EXPECT_GT(controller.estimate().rows_per_second, 0.6 * 6 * kBatchRows / 0.030);
}

TEST(DepthController, ShrinksWhenLatencyRisesWithoutThroughput) {
  Clock::time_point now{};
  DepthController controller(options(32, 32), now);
  const ModelGateway gateway{3, 20ms};
  const auto seen = drive(controller, gateway, now, 400);
  const auto [low, high] = settled(seen, 100);
  EXPECT_GE(low, 2u);
  EXPECT_LE(high, 5u);
}

TEST(DepthController, FollowsAGatewayThatGainsAndLosesCapacity) {
  Clock::time_point now{};
  DepthController controller(options(32, 4), now);
  drive(controller, ModelGateway{4, 25ms}, now, 200);
  auto seen = drive(controller, ModelGateway{12, 25ms}, now, 400);
  auto [low, high] = settled(seen, 100);
  EXPECT_GE(low, 10u);
  EXPECT_LE(high, 15u);
  seen = drive(controller, ModelGateway{2, 25ms}, now, 400);
  std::tie(low, high) = settled(seen, 100);
  EXPECT_GE(low, 1u);
  EXPECT_LE(high, 4u);
}

TEST(DepthController, ASlowerLinkIsNotTakenForQueueing) {
  // 1 ms more each way (a link latency) raises every batch's latency a little and alike: the depth
  // stays at the capacity instead of shrinking.
  Clock::time_point now{};
  DepthController controller(options(32, 4), now);
  drive(controller, ModelGateway{6, 20ms}, now, 300);
  const auto seen = drive(controller, ModelGateway{6, 22ms}, now, 600);
  const auto [low, high] = settled(seen, 100);
  EXPECT_GE(low, 5u);
  EXPECT_LE(high, 8u);
}

// Latency that climbs with every batch while the throughput still grows (a gateway whose handlers
// slow each other down before they saturate): up to `capacity` each step buys rows/s.
struct KneeGateway {
  std::size_t capacity;
  Clock::duration service;
  Clock::duration latency(std::size_t depth) const {
    const double d = static_cast<double>(depth);
    const double c = static_cast<double>(capacity);
    const double slower = 1 + std::min(d, c) / (2 * c);  // 1.5x at the capacity
    return std::chrono::duration_cast<Clock::duration>(service * slower * std::max(1.0, d / c));
  }
};

TEST(DepthController, KeepsTheQueueThatBuysThroughputAtTheKnee) {
  // A rule on latency alone (Vegas: a batch and a half waiting at depth 8) would shrink below the
  // knee and give throughput away; the rows/s say the depth is worth it.
  Clock::time_point now{};
  DepthController controller(options(32, 1), now);
  const KneeGateway gateway{8, 20ms};
  std::vector<std::size_t> seen;
  for (int r = 0; r < 600; ++r) {
    const std::size_t depth = controller.depth();
    for (std::size_t i = 1; i <= depth; ++i) controller.on_send(i);
    const auto latency = gateway.latency(depth);
    now += latency;
    for (std::size_t i = 0; i < depth; ++i) controller.on_ack(kBatchRows, latency, now);
    seen.push_back(controller.depth());
  }
  const auto [low, high] = settled(seen, 150);
  EXPECT_GE(low, 7u);
  EXPECT_LE(high, 9u);
}

TEST(DepthController, ShrinksWhenTheGatewayGetsBusierWithoutMoreThroughput) {
  // Settled at the capacity, then the gateway's handlers are shared with someone else (queries):
  // latency doubles and the rows/s halve; the depth gives way instead of queueing more.
  Clock::time_point now{};
  DepthController controller(options(32, 1), now);
  drive(controller, ModelGateway{8, 20ms}, now, 300);
  const std::size_t before = controller.depth();
  ASSERT_GE(before, 7u);
  const auto seen = drive(controller, ModelGateway{3, 40ms}, now, 600);
  EXPECT_LE(settled(seen, 100).second, 4u);
}

TEST(DepthController, StaysWithinItsBounds) {
  Clock::time_point now{};
  DepthController capped(options(3, 1), now);
  for (const auto depth : drive(capped, ModelGateway{100, 10ms}, now, 300)) EXPECT_LE(depth, 3u);
  EXPECT_EQ(capped.depth(), 3u);

  DepthController floor(options(8, 8), now);
  // Every batch waits behind every other one: shrinking never goes below one.
  const auto seen = drive(floor, ModelGateway{1, 50ms}, now, 600);
  for (const auto depth : seen) EXPECT_GE(depth, 1u);
  // It comes down to one and only tries two now and then.
  EXPECT_LE(settled(seen, 100).second, 2u);

  // No writers at all (max_depth 0) or an initial depth above the cap: clamped, not zero.
  DepthController none(options(0, 0), now);
  EXPECT_EQ(none.depth(), 1u);
  DepthController above(options(4, 100), now);
  EXPECT_EQ(above.depth(), 4u);
}

TEST(DepthController, AWindowInWhichTheDepthWasNeverReachedChangesNothing) {
  // The writers never had more than one batch at once (nothing to send): however fast the acks,
  // the depth did not bound them and is neither raised nor lowered.
  Clock::time_point now{};
  DepthController controller(options(16, 4), now);
  for (int i = 0; i < 1000; ++i) {
    controller.on_send(1);
    now += 5ms;
    controller.on_ack(kBatchRows, (i % 2 == 0) ? 5ms : 50ms, now);
  }
  EXPECT_EQ(controller.depth(), 4u);
  EXPECT_GT(controller.estimate().rows_per_second, 0);
}

TEST(DepthController, DecidesOnlyOnAWholeWindowOfAcks) {
  Clock::time_point now{};
  DepthController controller(options(16, 4), now);
  for (std::size_t i = 1; i <= 4; ++i) controller.on_send(i);
  // Three acks long after the window: fewer than the depth, no decision.
  now += 1s;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(controller.on_ack(kBatchRows, 1ms, now));
  EXPECT_EQ(controller.estimate().rows_per_second, 0);
  // The fourth closes the window: the first decision explores upwards.
  EXPECT_TRUE(controller.on_ack(kBatchRows, 1ms, now));
  EXPECT_EQ(controller.depth(), 5u);
  EXPECT_EQ(controller.estimate().mean_batch_rows, kBatchRows);
}

TEST(DepthController, HostileLatenciesKeepItInBounds) {
  // Zero, huge and alternating latencies (a clock that stalls, a call that hung for an hour) must
  // neither leave the bounds nor make the estimate useless.
  Clock::time_point now{};
  DepthController controller(options(8, 4), now);
  const Clock::duration latencies[] = {0ns, 1h, 1ns, 0ns, std::chrono::duration_cast<Clock::duration>(24h)};
  for (int i = 0; i < 500; ++i) {
    const std::size_t depth = controller.depth();
    for (std::size_t j = 1; j <= depth; ++j) controller.on_send(j);
    now += 100ms;
    for (std::size_t j = 0; j < depth; ++j) controller.on_ack(kBatchRows, latencies[(i + j) % 5], now);
    ASSERT_GE(controller.depth(), 1u);
    ASSERT_LE(controller.depth(), 8u);
  }
}

TEST(DerivedInflightRows, CoversTheBatchesAtTheGatewaysAsManyReadyABatchAndAPoll) {
  FlowEstimate estimate;
  estimate.depth = 4;
  estimate.mean_batch_rows = 500;
  EXPECT_EQ(derived_inflight_rows(estimate, 500, 1000), 4 * 500 + 4 * 500 + 500 + 1000u);
  // Half a second of a fast flow, when that is more than the batches at the gateways.
  estimate.rows_per_second = 100'000;
  EXPECT_EQ(derived_inflight_rows(estimate, 500, 1000), 4 * 500 + 50'000 + 500 + 1000u);
}

TEST(DerivedInflightRows, BeforeAnyAckItAssumesFullBatchesAndNeverGoesBelowABatchAndAPoll) {
  EXPECT_EQ(derived_inflight_rows(FlowEstimate{}, 500, 1000), 500 + 500 + 500 + 1000u);
  FlowEstimate tiny;
  tiny.depth = 1;
  tiny.mean_batch_rows = 1;
  EXPECT_GE(derived_inflight_rows(tiny, 500, 1000), 1500u);
}

TEST(DerivedInflightRows, GrowsWithTheFlowSoALowBoundCannotHoldItselfDown) {
  // Throughput bounded by the rows in flight (Little: rows / latency) must derive more rows than
  // it had, or a small bound would keep the flow small for good.
  const double latency_s = 0.040;
  std::size_t rows = derived_inflight_rows(FlowEstimate{}, 500, 1000);
  for (int i = 0; i < 5; ++i) {
    FlowEstimate estimate;
    estimate.depth = 4;
    estimate.mean_batch_rows = 500;
    estimate.rows_per_second = static_cast<double>(rows) / latency_s;
    const std::size_t next = derived_inflight_rows(estimate, 500, 1000);
    EXPECT_GT(next, rows);
    rows = next;
  }
}

TEST(DerivedInflightRows, AHugeEstimateDoesNotOverflow) {
  FlowEstimate estimate;
  estimate.depth = std::numeric_limits<std::size_t>::max();
  estimate.mean_batch_rows = 1e300;
  estimate.rows_per_second = std::numeric_limits<double>::infinity();
  const auto rows = derived_inflight_rows(estimate, 500, 1000);
  EXPECT_GE(rows, 1'000'000'000'000u);
  EXPECT_LT(rows, std::numeric_limits<std::size_t>::max());
}

}  // namespace
}  // namespace hbingest::ingest
