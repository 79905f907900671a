// Prints a registry shaped like the daemon's (every metric kind, labels needing escapes, callback
// gauges, empty families) for `promtool check metrics` (see CMakeLists.txt).
#include <cstdio>

#include "hbingest/metrics/registry.h"

int main() {
  using hbingest::metrics::Histogram;
  hbingest::metrics::Registry registry;
  registry.gauge_family("hbingest_build_info", "Build information; always 1.")
      .add({{"version", "0.1.0"}, {"compiler", "gcc \"12\""}})
      .set(1);
  auto& consumed = registry.counter_family("hbingest_events_consumed_total", "Events consumed by topic and type.");
  consumed.add({{"topic", "events"}, {"event_type", "login"}}).increment(1200);
  consumed.add({{"topic", "events"}, {"event_type", "order"}}).increment(800);
  registry.counter_family("hbingest_decode_failures_total", "Events that failed to decode, by reason.")
      .add({{"reason", "bad json: unexpected \"}\"\nat C:\\x"}})
      .increment(3);
  registry.counter_family("hbingest_rows_written_total", "Rows HBase acknowledged.").add({{"table", "events"}}).increment(1999);
  registry.gauge_family("hbingest_inflight_rows", "Rows decoded, not yet acknowledged.").add({}).set(42);
  registry.gauge_family("hbingest_consumer_lag", "Consumer lag per partition (librdkafka statistics).")
      .add_callback({{"topic", "events"}, {"partition", "0"}}, [] { return 17.0; });
  auto& latency = registry.histogram_family("hbingest_write_latency_seconds", "Batch write latency.",
                                            Histogram::exponential_buckets(0.001, 2, 12));
  for (double v : {0.0005, 0.003, 0.02, 0.4, 9.0}) latency.add({{"endpoint", "127.0.0.1:19090"}}).observe(v);
  registry.histogram_family("hbingest_batch_rows", "Rows per batch.", Histogram::linear_buckets(100, 100, 5))
      .add({})
      .observe(250);
  registry.counter_family("hbingest_dlq_writes_total", "Never incremented here: an empty family.");
  const std::string text = registry.serialize();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
