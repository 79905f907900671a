// hbingest gen: sample login/order traffic into a Kafka topic, for the demo, tests and benchmarks.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "hbingest/connectors/event_generator.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/daemon/commands.h"

namespace hbingest::daemon {

namespace {

using namespace std::chrono_literals;

constexpr auto kFlushTimeout = 60s;
constexpr auto kTopicCreateTimeout = 30s;
// Rate pacing: sleep once a slice is ahead of schedule rather than after every event.
constexpr auto kMaxSleep = 50ms;

constexpr const char* kUsage =
    "usage: hbingest gen --brokers HOST:PORT[,...] --topic T [options]\n"
    "  --count N               events to produce (default 1000; 0 = until SIGINT/SIGTERM)\n"
    "  --rate R                events per second (default 0 = as fast as possible)\n"
    "  --invalid-fraction F    share of invalid events, 0..1 (default 0)\n"
    "  --order-fraction F      share of valid events that are orders, 0..1 (default 0.4)\n"
    "  --users N               distinct user ids, Zipf-skewed (default 100000)\n"
    "  --seed S                random seed (default 1)\n"
    "  --time-spread D         event times spread over [now - D, now], e.g. 10m, 30s, 500ms (default 0)\n"
    "  --partitions P          create the topic with P partitions if it does not exist\n"
    "                          (otherwise rely on broker auto-creation)\n"
    "  --replication-factor R  for --partitions (default 1)\n"
    "  -X key=value            librdkafka producer property (repeatable), e.g. -X security.protocol=ssl\n";

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

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

std::uint64_t parse_uint(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || value[0] == '-') {
    throw std::invalid_argument(flag + ": expected a non-negative integer, got '" + value + "'");
  }
  return v;
}

double parse_double(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || !(v >= 0)) {
    throw std::invalid_argument(flag + ": expected a non-negative number, got '" + value + "'");
  }
  return v;
}

// "10m", "30s", "500ms", "2h", "0".
std::chrono::milliseconds parse_duration(const std::string& flag, const std::string& value) {
  std::size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  if (digits == 0) throw std::invalid_argument(flag + ": expected a duration like 10m, 30s or 500ms, got '" + value + "'");
  const auto n = static_cast<std::int64_t>(parse_uint(flag, value.substr(0, digits)));
  const std::string unit = value.substr(digits);
  if (unit == "ms") return std::chrono::milliseconds(n);
  if (unit == "s" || (unit.empty() && n == 0)) return std::chrono::seconds(n);
  if (unit == "m") return std::chrono::minutes(n);
  if (unit == "h") return std::chrono::hours(n);
  throw std::invalid_argument(flag + ": unknown unit '" + unit + "' in '" + value + "' (use ms, s, m or h)");
}

// nullopt when --help was asked for (and printed).
std::optional<GenArgs> parse_args(const Args& args) {
  GenArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return std::nullopt;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(flag + ": missing value\n" + kUsage);
    const std::string& value = args[++i];
    if (flag == "--brokers") {
      out.brokers = value;
    } else if (flag == "--topic") {
      out.topic = value;
    } else if (flag == "--count") {
      out.count = parse_uint(flag, value);
    } else if (flag == "--rate") {
      out.rate = parse_double(flag, value);
    } else if (flag == "--invalid-fraction") {
      out.generator.invalid_fraction = parse_double(flag, value);
    } else if (flag == "--order-fraction") {
      out.generator.order_fraction = parse_double(flag, value);
    } else if (flag == "--users") {
      out.generator.users = static_cast<std::uint32_t>(parse_uint(flag, value));
    } else if (flag == "--seed") {
      out.generator.seed = parse_uint(flag, value);
    } else if (flag == "--time-spread") {
      out.generator.time_spread = parse_duration(flag, value);
    } else if (flag == "--partitions") {
      out.partitions = static_cast<int>(parse_uint(flag, value));
    } else if (flag == "--replication-factor") {
      out.replication_factor = static_cast<int>(parse_uint(flag, value));
    } else if (flag == "-X") {
      const auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument("-X: expected key=value, got '" + value + "'");
      out.properties[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      throw std::invalid_argument("unknown option '" + flag + "'\n" + kUsage);
    }
  }
  if (out.brokers.empty()) throw std::invalid_argument(std::string("--brokers is required\n") + kUsage);
  if (out.topic.empty()) throw std::invalid_argument(std::string("--topic is required\n") + kUsage);
  return out;
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int gen_command(const Args& args) {
  const std::optional<GenArgs> parsed = parse_args(args);
  if (!parsed) return 0;
  const GenArgs& opts = *parsed;
  connectors::EventGenerator generator(opts.generator);

  connectors::KafkaProducerOptions producer_options;
  producer_options.bootstrap_servers = opts.brokers;
  producer_options.properties = opts.properties;
  connectors::KafkaProducer producer(producer_options);

  if (opts.partitions > 0) {
    const bool created =
        producer.create_topic(opts.topic, opts.partitions, opts.replication_factor, {}, kTopicCreateTimeout);
    spdlog::info("topic {} {}", opts.topic,
                 created ? "created with " + std::to_string(opts.partitions) + " partitions" : "already exists");
  }

  g_stop.store(false);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);

  std::uint64_t produced = 0;
  std::uint64_t invalid = 0;
  std::uint64_t failed = 0;
  std::string first_failure;
  const auto start = std::chrono::steady_clock::now();
  while ((opts.count == 0 || produced < opts.count) && !g_stop.load()) {
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
    const connectors::GeneratedEvent event = generator.next(now_ms());
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

}  // namespace hbingest::daemon
