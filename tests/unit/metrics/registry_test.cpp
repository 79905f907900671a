#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "hbingest/metrics/registry.h"

namespace hbingest::metrics {
namespace {

using ::testing::HasSubstr;

TEST(Counter, IncrementsAndIgnoresNegative) {
  Counter c;
  c.increment();
  c.increment(2.5);
  c.increment(-10);
  EXPECT_DOUBLE_EQ(c.value(), 3.5);
}

TEST(Gauge, SetIncrementDecrement) {
  Gauge g;
  g.set(10);
  g.increment(5);
  g.decrement(7);
  g.decrement();
  EXPECT_DOUBLE_EQ(g.value(), 7);
}

TEST(Histogram, BucketsAreCumulativeWithLeSemantics) {
  Histogram h({1, 5, 10});
  for (double v : {0.5, 1.0, 1.5, 5.0, 7.0, 100.0, std::numeric_limits<double>::quiet_NaN()}) h.observe(v);
  const auto snap = h.snapshot();
  EXPECT_EQ(snap.cumulative, (std::vector<std::uint64_t>{2, 4, 5, 6}));
  EXPECT_EQ(snap.count, 6u);
  EXPECT_DOUBLE_EQ(snap.sum, 115.0);
}

TEST(Histogram, RejectsBadBounds) {
  EXPECT_THROW(Histogram({1, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({2, 1}), std::invalid_argument);
  EXPECT_THROW(Histogram({1, std::numeric_limits<double>::infinity()}), std::invalid_argument);
  EXPECT_EQ(Histogram::exponential_buckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(Histogram::linear_buckets(0, 5, 3), (std::vector<double>{0, 5, 10}));
}

TEST(Family, SameLabelsGiveTheSameChild) {
  Registry registry;
  auto& family = registry.counter_family("hbingest_events_consumed_total", "Events consumed.");
  Counter& a = family.add({{"topic", "events"}, {"event_type", "login"}});
  Counter& b = family.add({{"event_type", "login"}, {"topic", "events"}});
  Counter& c = family.add({{"topic", "events"}, {"event_type", "order"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  EXPECT_EQ(family.size(), 2u);
  family.remove({{"topic", "events"}, {"event_type", "order"}});
  EXPECT_EQ(family.size(), 1u);
}

TEST(Family, ValidatesLabels) {
  Registry registry;
  auto& counters = registry.counter_family("x_total", "x");
  EXPECT_THROW(counters.add({{"bad-name", "v"}}), std::invalid_argument);
  EXPECT_THROW(counters.add({{"__reserved", "v"}}), std::invalid_argument);
  EXPECT_THROW(counters.add({{"1st", "v"}}), std::invalid_argument);
  auto& histograms = registry.histogram_family("h_seconds", "h", {1});
  EXPECT_THROW(histograms.add({{"le", "1"}}), std::invalid_argument);
  auto& gauges = registry.gauge_family("g", "g");
  gauges.add({{"p", "0"}});
  EXPECT_THROW(gauges.add_callback({{"p", "0"}}, [] { return 1.0; }), std::invalid_argument);
  gauges.add_callback({{"p", "1"}}, [] { return 1.0; });
  EXPECT_THROW(gauges.add({{"p", "1"}}), std::invalid_argument);
}

TEST(Registry, ValidatesNamesAndConflicts) {
  Registry registry;
  EXPECT_THROW(registry.gauge_family("bad name", "h"), std::invalid_argument);
  EXPECT_THROW(registry.gauge_family("9lives", "h"), std::invalid_argument);
  EXPECT_THROW(registry.gauge_family("no_help", ""), std::invalid_argument);
  EXPECT_THROW(registry.counter_family("rows_written", "h"), std::invalid_argument);
  auto& rows = registry.counter_family("rows_written_total", "Rows.");
  EXPECT_EQ(&rows, &registry.counter_family("rows_written_total", "Rows."));
  EXPECT_THROW(registry.counter_family("rows_written_total", "Other help."), std::invalid_argument);
  EXPECT_THROW(registry.gauge_family("rows_written_total", "Rows."), std::invalid_argument);
  registry.histogram_family("lat_seconds", "L.", {0.1, 1});
  EXPECT_THROW(registry.histogram_family("lat_seconds", "L.", {0.1, 2}), std::invalid_argument);
  EXPECT_NO_THROW(registry.gauge_family("ns:sub_metric", "colons are legal"));
}

TEST(Registry, SerializesTextFormat) {
  Registry registry;
  auto& rows = registry.counter_family("hbingest_rows_written_total", "Rows HBase acknowledged.");
  rows.add({{"table", "events"}}).increment(42);
  auto& inflight = registry.gauge_family("hbingest_inflight_rows", "Rows in flight.");
  inflight.add({}).set(7);
  auto& lat = registry.histogram_family("hbingest_write_latency_seconds", "Write latency.", {0.005, 0.1, 1});
  auto& h = lat.add({{"endpoint", "h:9090"}});
  h.observe(0.001);
  h.observe(0.05);
  h.observe(3);
  auto& lag = registry.gauge_family("hbingest_consumer_lag", "Lag per partition.");
  lag.add_callback({{"topic", "events"}, {"partition", "3"}}, [] { return 1234.0; });
  registry.gauge_family("hbingest_unused", "Never given a child.");

  EXPECT_EQ(registry.serialize(),
            "# HELP hbingest_rows_written_total Rows HBase acknowledged.\n"
            "# TYPE hbingest_rows_written_total counter\n"
            "hbingest_rows_written_total{table=\"events\"} 42\n"
            "# HELP hbingest_inflight_rows Rows in flight.\n"
            "# TYPE hbingest_inflight_rows gauge\n"
            "hbingest_inflight_rows 7\n"
            "# HELP hbingest_write_latency_seconds Write latency.\n"
            "# TYPE hbingest_write_latency_seconds histogram\n"
            "hbingest_write_latency_seconds_bucket{endpoint=\"h:9090\",le=\"0.005\"} 1\n"
            "hbingest_write_latency_seconds_bucket{endpoint=\"h:9090\",le=\"0.1\"} 2\n"
            "hbingest_write_latency_seconds_bucket{endpoint=\"h:9090\",le=\"1\"} 2\n"
            "hbingest_write_latency_seconds_bucket{endpoint=\"h:9090\",le=\"+Inf\"} 3\n"
            "hbingest_write_latency_seconds_sum{endpoint=\"h:9090\"} 3.051\n"
            "hbingest_write_latency_seconds_count{endpoint=\"h:9090\"} 3\n"
            "# HELP hbingest_consumer_lag Lag per partition.\n"
            "# TYPE hbingest_consumer_lag gauge\n"
            "hbingest_consumer_lag{partition=\"3\",topic=\"events\"} 1234\n");
}

TEST(Registry, EscapesLabelValuesAndHelp) {
  Registry registry;
  auto& family = registry.counter_family("esc_total", "Help with \\ and\nnewline and \"quotes\".");
  family.add({{"reason", "bad \"json\"\nat C:\\path"}}).increment();
  EXPECT_EQ(registry.serialize(),
            "# HELP esc_total Help with \\\\ and\\nnewline and \"quotes\".\n"
            "# TYPE esc_total counter\n"
            "esc_total{reason=\"bad \\\"json\\\"\\nat C:\\\\path\"} 1\n");
}

TEST(Registry, FormatsSpecialValues) {
  Registry registry;
  auto& g = registry.gauge_family("special", "s.");
  g.add({{"v", "inf"}}).set(std::numeric_limits<double>::infinity());
  g.add({{"v", "minf"}}).set(-std::numeric_limits<double>::infinity());
  g.add({{"v", "nan"}}).set(std::numeric_limits<double>::quiet_NaN());
  g.add({{"v", "small"}}).set(0.25);
  g.add({{"v", "big"}}).set(1e21);
  const std::string text = registry.serialize();
  EXPECT_THAT(text, HasSubstr("special{v=\"inf\"} +Inf\n"));
  EXPECT_THAT(text, HasSubstr("special{v=\"minf\"} -Inf\n"));
  EXPECT_THAT(text, HasSubstr("special{v=\"nan\"} NaN\n"));
  EXPECT_THAT(text, HasSubstr("special{v=\"small\"} 0.25\n"));
  EXPECT_THAT(text, HasSubstr("special{v=\"big\"} 1e+21\n"));
}

TEST(Registry, ConcurrentUpdatesAreNotLost) {
  Registry registry;
  auto& counters = registry.counter_family("c_total", "c");
  auto& hist = registry.histogram_family("h", "h", {10, 100});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Counter& shared = counters.add({{"k", "shared"}});
      Histogram& h = hist.add({});
      for (int i = 0; i < kPerThread; ++i) {
        shared.increment();
        counters.add({{"k", "t" + std::to_string(t % 2)}}).increment();
        h.observe(i % 200);
        if (i % 5000 == 0) (void)registry.serialize();  // scrapes race with updates
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_DOUBLE_EQ(counters.add({{"k", "shared"}}).value(), kThreads * kPerThread);
  EXPECT_DOUBLE_EQ(counters.add({{"k", "t0"}}).value(), kThreads / 2 * kPerThread);
  const auto snap = hist.add({}).snapshot();
  EXPECT_EQ(snap.count, static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(snap.cumulative[0], static_cast<std::uint64_t>(kThreads * kPerThread / 200 * 11));
}

}  // namespace
}  // namespace hbingest::metrics
