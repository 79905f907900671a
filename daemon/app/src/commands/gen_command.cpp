// hbingest gen: sample login/order traffic into a Kafka topic, for the demo, tests and benchmarks.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/signals.h"
#include "hbingest/config/duration.h"
#include "hbingest/connectors/event_generator.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/ingest/wall_clock.h"

namespace hbingest::app {

namespace {

using namespace std::chrono_literals;

constexpr auto kFlushTimeout = 60s;
constexpr auto kTopicCreateTimeout = 30s;
// Rate pacing: sleep once a slice is ahead of schedule rather than after every event.
constexpr auto kMaxSleep = 50ms;

struct GenArgs {
  std::string brokers;
  std::string topic;
  std::uint64_t count = 1000;
  double rate = 0.0;
  int partitions = 0;
  int replication_factor = 1;
  connectors::EventGeneratorOptions generator;
  std::map<std::string, std::string> properties;
};

// nullopt when --help was asked for (and printed) or the arguments were wrong (and said so).
std::optional<GenArgs> parse_args(const Args& args, int& exit_code) {
  CLI::App cli{"Produce realistic login/order JSON events (Zipf-skewed users, optional invalid share) to a topic.",
               "hbingest gen"};
  GenArgs out;
  std::string time_spread = "0";
  std::vector<std::string> properties;
  cli.add_option("--brokers", out.brokers, "bootstrap servers, host:port[,...]")->required();
  cli.add_option("--topic", out.topic, "topic to produce to")->required();
  cli.add_option("--count", out.count, "events to produce (0 = until SIGINT/SIGTERM)")->capture_default_str();
  cli.add_option("--rate", out.rate, "events per second (0 = as fast as possible)")->check(CLI::NonNegativeNumber);
  cli.add_option("--invalid-fraction", out.generator.invalid_fraction, "share of invalid events")
      ->check(CLI::Range(0.0, 1.0));
  cli.add_option("--order-fraction", out.generator.order_fraction, "share of valid events that are orders")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cli.add_option("--users", out.generator.users, "distinct user ids, Zipf-skewed")->capture_default_str();
  cli.add_option("--seed", out.generator.seed, "random seed")->capture_default_str();
  cli.add_option("--time-spread", time_spread, "event times spread over [now - D, now], e.g. 10m, 30s, 500ms");
  cli.add_option("--partitions", out.partitions, "create the topic with P partitions if it does not exist");
  cli.add_option("--replication-factor", out.replication_factor, "for --partitions")->capture_default_str();
  cli.add_option("-X", properties,
                 "librdkafka producer property key=value (repeatable), e.g. -X security.protocol=ssl");
  if (auto exit = parse_command_line(cli, args)) {
    exit_code = *exit;
    return std::nullopt;
  }
  try {
    out.generator.time_spread = config::parse_duration(time_spread);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--time-spread: ") + e.what());
  }
  for (const auto& property : properties) {
    const auto eq = property.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("-X: expected key=value, got '" + property + "'");
    out.properties[property.substr(0, eq)] = property.substr(eq + 1);
  }
  return out;
}

}  // namespace

int gen_command(const Args& args) {
  int exit_code = 0;
  const std::optional<GenArgs> parsed = parse_args(args, exit_code);
  if (!parsed) return exit_code;
  const GenArgs& opts = *parsed;
  connectors::EventGenerator generator(opts.generator);

  connectors::KafkaProducerOptions producer_options;
  producer_options.bootstrap_servers = opts.brokers;
  producer_options.properties = opts.properties;
  // The daemon's signal handling: first TERM/INT stops producing and flushes, a second exits.
  // Before the producer, whose librdkafka threads must inherit the blocked signal mask.
  SignalWatcher signals(nullptr, kFlushTimeout + SignalWatcher::kStopGrace);
  connectors::KafkaProducer producer(producer_options);

  if (opts.partitions > 0) {
    const bool created =
        producer.create_topic(opts.topic, opts.partitions, opts.replication_factor, {}, kTopicCreateTimeout);
    spdlog::info("topic {} {}", opts.topic,
                 created ? "created with " + std::to_string(opts.partitions) + " partitions" : "already exists");
  }

  std::uint64_t produced = 0;
  std::uint64_t invalid = 0;
  std::uint64_t failed = 0;
  std::string first_failure;
  const auto start = std::chrono::steady_clock::now();
  while ((opts.count == 0 || produced < opts.count) && !signals.stop_requested().load()) {
    if (opts.rate > 0) {
      // Event i is due at start + i / rate.
      const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(produced) / opts.rate));
      const auto now = std::chrono::steady_clock::now();
      if (due > now) {
        producer.poll(0ms);
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(due - now, kMaxSleep));
        continue;
      }
    }
    const connectors::GeneratedEvent event = generator.next(ingest::wall_clock_ms());
    connectors::ProducerRecord record;
    record.topic = opts.topic;
    if (event.key) record.key = *event.key;
    record.payload = event.payload;
    producer.produce(record, [&](const connectors::DeliveryReport& report) {
      if (report.delivered) return;
      if (failed++ == 0) first_failure = report.error;
    });
    ++produced;
    if (!event.valid()) ++invalid;
    if (produced % 1000 == 0) producer.poll(0ms);
  }

  const bool drained = producer.flush(kFlushTimeout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("produced %llu events (%llu invalid) in %.3f s\n", static_cast<unsigned long long>(produced),
              static_cast<unsigned long long>(invalid), seconds);
  std::fflush(stdout);
  if (!drained) {
    std::fprintf(stderr, "hbingest gen: %zu events still undelivered after %lld s\n", producer.in_flight(),
                 static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(kFlushTimeout).count()));
    return 1;
  }
  if (failed > 0) {
    std::fprintf(stderr, "hbingest gen: %llu events failed delivery, first: %s\n",
                 static_cast<unsigned long long>(failed), first_failure.c_str());
    return 1;
  }
  return 0;
}

}  // namespace hbingest::app
