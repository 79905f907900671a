// The write ceiling of the Thrift2 gateway for bench/compare.sh: reads `--events` messages of a
// topic, turns them into exactly the rows `hbingest run` writes (the daemon's decoder and key spec),
// cuts them into batches the way the daemon's defaults do, and only then starts the clock: `--writers`
// connections send the prebuilt batches with putMultiple as fast as the gateway takes them.
//
//   build/bench/putmultiple_ceiling --brokers B --topic T --thrift2 H:P --table T --events N [--packed]
//
// --packed: the rows of a route packing each event into one cell, as bench/compare.sh's
// `hbingest_packed` configures it (columns: [{from: kafka:value, to: "d:raw", type: bytes}]), so the
// packed layout has a ceiling of its own.
//
// Prints one JSON line: events, write seconds, CPU seconds of the write phase (getrusage), and the
// process's peak RSS (which includes every prebuilt batch, so it says nothing about a streaming
// client). Exits non-zero when a row is rejected or fewer than N events could be read.

#include <sys/resource.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/ingest/batcher.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/row_mapping.h"

namespace {

using namespace hbingest;
using Clock = std::chrono::steady_clock;
using Batch = std::vector<connectors::RowMutation>;

struct Args {
  std::string brokers;
  std::string topic;
  std::string thrift2;
  std::string table;
  std::size_t events = 0;
  std::string buckets = "100";
  std::int64_t ttl_ms = 0;
  bool packed = false;
  // The daemon's defaults unless told otherwise, so the ceiling uses its connections and batch size.
  int writers = config::WriterConfig{}.writers;
  std::size_t batch_rows = config::WriterConfig{}.batch_max_rows;
  std::size_t batch_bytes = config::WriterConfig{}.batch_max_bytes;
};

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// compare.sh's packed route: the message value as received, one cell per event.
config::ColumnConfig packed_column() {
  config::ColumnConfig column;
  column.from = "kafka:value";
  column.to = "d:raw";
  column.type = "bytes";
  column.source = "putmultiple_ceiling --packed";
  return column;
}

// Every event of the topic up to `args.events`, as the daemon's rows, cut like the daemon's batcher
// (by rows or bytes, whichever is reached first). Any invalid event is an error: compare.sh
// preloads valid events only, and a row the daemon would not write has no place in its ceiling.
std::vector<Batch> prebuild(const Args& args) {
  connectors::KafkaSourceOptions options;
  options.bootstrap_servers = args.brokers;
  options.group_id = "putmultiple_ceiling_" + std::to_string(Clock::now().time_since_epoch().count());
  options.topics = {args.topic};
  options.properties = {{"auto.offset.reset", "earliest"}, {"enable.auto.commit", "false"}};
  connectors::KafkaSource source(options);
  event_formats::EventDecoder decoder(config::DecodeConfig{});
  // The mapping the daemon builds for the route (routing/src/build_routes.cpp): its columns when
  // packed, else decode's default one cell per top-level field.
  const auto mapping = args.packed ? routing::RowMapping::from_columns({packed_column()}, config::NullFields::skip)
                                   : routing::RowMapping::from_decode(config::DecodeConfig{});
  routing::RowCells cells;
  const auto spec = keyspec::KeySpec::preset("events", {{"buckets", args.buckets}});

  std::vector<Batch> batches(1);
  std::size_t batch_bytes = 0;
  std::size_t read = 0;
  auto idle_since = Clock::now();
  while (read < args.events) {
    auto messages = source.poll(1000, std::chrono::milliseconds(500));
    if (messages.empty()) {
      if (Clock::now() - idle_since > std::chrono::seconds(60)) {
        throw std::runtime_error("read only " + std::to_string(read) + " of " + std::to_string(args.events) +
                                 " events from " + args.topic + " (60 s without a message)");
      }
      continue;
    }
    idle_since = Clock::now();
    for (const auto& message : messages) {
      if (read == args.events) break;
      ++read;
      event_formats::DecodedEvent event;
      if (const auto invalid = decoder.decode({message.topic, message.payload, message.timestamp_ms}, event)) {
        throw std::runtime_error("partition " + std::to_string(message.partition) + " offset " +
                                 std::to_string(message.offset) + ": invalid event: " + invalid->message);
      }
      connectors::RowMutation row;
      const keyspec::KafkaMeta meta{message.topic, message.partition, message.offset, message.timestamp_ms};
      if (const auto error = spec.encode(decoder.fields(), meta, row.row)) {
        throw std::runtime_error("partition " + std::to_string(message.partition) + " offset " +
                                 std::to_string(message.offset) + ": key: " + error->message());
      }
      if (const auto error = mapping.apply({decoder.record(), &decoder.fields(), message.payload_bytes()}, cells)) {
        throw std::runtime_error("partition " + std::to_string(message.partition) + " offset " +
                                 std::to_string(message.offset) + ": " + error->message);
      }
      row.cells = std::move(cells.cells);
      row.timestamp_ms = event.time_ms;
      row.ttl_ms = args.ttl_ms;
      const auto bytes = ingest::Batcher::row_bytes(row);
      if (!batches.back().empty() &&
          (batches.back().size() == args.batch_rows || batch_bytes + bytes > args.batch_bytes)) {
        batches.emplace_back();
        batch_bytes = 0;
      }
      batches.back().push_back(std::move(row));
      batch_bytes += bytes;
    }
  }
  source.close(std::chrono::seconds(10));
  return batches;
}

// Like the daemon's writers, a retriable failure (region busy, memstore flush) is retried: the
// ceiling is what the gateway takes, not how it fails.
void write(connectors::RowSink& sink, const std::string& table, const Batch& batch) {
  for (int attempt = 1;; ++attempt) {
    try {
      const auto rejected = sink.write(table, batch, {});
      if (!rejected.empty()) throw std::runtime_error("HBase rejected a row: " + rejected.front().reason);
      return;
    } catch (const connectors::HBaseError& e) {
      if (!e.retriable() || attempt == 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"Raw putMultiple of prebuilt batches through the Thrift2 gateway: the ceiling for bench/compare.sh"};
  Args args;
  cli.add_option("--brokers", args.brokers, "Kafka bootstrap servers")->required();
  cli.add_option("--topic", args.topic, "topic holding the events")->required();
  cli.add_option("--thrift2", args.thrift2, "Thrift2 gateway host:port")->required();
  cli.add_option("--table", args.table, "table to write (it must exist)")->required();
  cli.add_option("--events", args.events, "events to read and write")->required();
  cli.add_option("--buckets", args.buckets, "salt buckets of the events preset")->capture_default_str();
  cli.add_option("--ttl-ms", args.ttl_ms, "per-put TTL (_ttl attribute)")->required();
  cli.add_option("--writers", args.writers, "connections")->capture_default_str();
  cli.add_option("--batch-rows", args.batch_rows, "rows per putMultiple")->capture_default_str();
  cli.add_flag("--packed", args.packed, "one cell per event, the message value (d:raw), as a packed route writes");
  CLI11_PARSE(cli, argc, argv);

  try {
    const auto batches = prebuild(args);
    connectors::Thrift2Options thrift2;
    thrift2.endpoints = {args.thrift2};
    std::vector<std::unique_ptr<connectors::RowSink>> sinks;
    for (int w = 0; w < args.writers; ++w) sinks.push_back(connectors::make_thrift2_sink(thrift2));

    // compare.sh starts its window on the HBase and gateway JVMs' CPU at this line.
    std::fprintf(stderr, "putmultiple_ceiling: writing %zu batches\n", batches.size());
    std::fflush(stderr);
    const double cpu_before = cpu_seconds();
    const auto started = Clock::now();
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::string failure;
    std::vector<std::thread> writers;
    for (auto& sink : sinks) {
      writers.emplace_back([&, sink = sink.get()] {
        try {
          for (auto i = next++; i < batches.size() && !failed; i = next++) write(*sink, args.table, batches[i]);
        } catch (const std::exception& e) {
          if (!failed.exchange(true)) failure = e.what();
        }
      });
    }
    for (auto& t : writers) t.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    // ... and ends it here: the JVMs' and the machine's CPU are taken over the write phase alone.
    std::fprintf(stderr, "putmultiple_ceiling: written\n");
    std::fflush(stderr);
    const double cpu = cpu_seconds() - cpu_before;
    if (failed) throw std::runtime_error(failure);

    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf(
        "{\"events\": %zu, \"batches\": %zu, \"write_seconds\": %.3f, \"write_cpu_seconds\": %.3f, "
        "\"peak_rss_kib\": %ld}\n",
        args.events, batches.size(), seconds, cpu, usage.ru_maxrss);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "putmultiple_ceiling: %s\n", e.what());
    return 1;
  }
}
