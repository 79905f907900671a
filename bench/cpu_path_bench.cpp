// The ingest CPU path without I/O: JSON decode → row key → row → Thrift2 putMultiple bytes, for
// realistic login and order events (the `hbingest gen` generator's), the way the pipeline and a
// writer do it: the decoder, the key spec and the Thrift encoder are reused, rows go into
// batches of 500 (writer.batch_rows' default) and each full batch is encoded into the encoder's
// reused buffer. Reports events/s and heap allocations per event (operator new is counted below).
//
//   build/bench/cpu_path_bench --benchmark_min_time=2 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// With repetitions, a `min` aggregate comes beside the mean and median: the machine is shared,
// and the fastest repetition is the one least disturbed by other processes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "hbingest/connectors/event_generator.h"
#include "hbingest/connectors/thrift2_put_encoder.h"
#include "hbingest/connectors/source.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/keyspec/key_spec.h"

// Every C++ heap allocation of this binary, counted (single-threaded benchmarks; relaxed is enough).
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC 12 takes the free() in a replaced operator delete for a mismatch with operator new.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

using namespace hbingest;

constexpr std::size_t kBatchRows = 500;
constexpr std::size_t kDistinctEvents = 1000;  // cycled through, so that no single event is learnt
constexpr std::int64_t kNowMs = 1795500000000;

// kDistinctEvents messages of one kind (login or order) as the Kafka source hands them over.
std::vector<connectors::SourceMessage> messages(connectors::EventKind kind) {
  connectors::EventGeneratorOptions options;
  options.order_fraction = kind == connectors::EventKind::kOrder ? 1.0 : 0.0;
  options.time_spread = std::chrono::minutes(2);
  connectors::EventGenerator generator(options);
  std::vector<connectors::SourceMessage> out;
  for (std::size_t i = 0; i < kDistinctEvents; ++i) {
    auto event = generator.next(kNowMs);
    if (event.kind != kind) throw std::logic_error("generator gave another kind");
    connectors::SourceMessage message;
    message.topic = "events_login_order";  // longer than a string's inline buffer, as real names are
    message.partition = static_cast<std::int32_t>(i % 4);
    message.offset = static_cast<std::int64_t>(1000000 + i);
    message.timestamp_ms = event.ts_ms;
    message.key = event.key;
    message.payload = std::move(event.payload);
    out.push_back(std::move(message));
  }
  return out;
}

// decode → key → row, as Pipeline::handle does for a valid event; encode per full batch, as a
// writer does.
void BM_CpuPath(benchmark::State& state, connectors::EventKind kind) {
  const auto input = messages(kind);
  const config::DecodeConfig decode_config;  // the daemon's defaults: columns: fields, family d
  event_formats::EventDecoder decoder(decode_config);
  event_formats::DecodedEvent event;
  const auto spec = keyspec::KeySpec::preset("events", {{"buckets", "8"}});
  std::string key;
  connectors::Thrift2PutEncoder encoder(connectors::ThriftProtocolKind::binary);
  const std::string table = "default:events";
  std::vector<connectors::RowMutation> rows;
  rows.reserve(kBatchRows);
  std::size_t next = 0;
  std::size_t call_bytes = 0;

  const auto allocations_before = g_allocations.load();
  for (auto _ : state) {
    const auto& message = input[next];
    next = next + 1 == input.size() ? 0 : next + 1;
    if (auto invalid = decoder.decode({message.topic, message.payload, message.timestamp_ms}, event)) {
      state.SkipWithError(invalid->message.c_str());
      break;
    }
    const keyspec::KafkaMeta meta{message.topic, message.partition, message.offset, message.timestamp_ms};
    if (auto error = spec.encode(decoder.fields(), meta, key)) {
      state.SkipWithError(error->message().c_str());
      break;
    }
    connectors::RowMutation row;
    row.row = key;
    row.cells = std::move(event.cells);
    row.timestamp_ms = event.time_ms;
    row.ttl_ms = 600000;
    rows.push_back(std::move(row));
    if (rows.size() == kBatchRows) {
      call_bytes = encoder.encode(table, rows, connectors::Durability::use_default).size();
      benchmark::DoNotOptimize(call_bytes);
      rows.clear();
    }
  }
  const auto allocations = g_allocations.load() - allocations_before;
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs_per_event"] =
      benchmark::Counter(static_cast<double>(allocations), benchmark::Counter::kAvgIterations);
  state.counters["call_bytes_per_event"] = static_cast<double>(call_bytes) / kBatchRows;
}

double min_of(const std::vector<double>& values) { return *std::min_element(values.begin(), values.end()); }

BENCHMARK_CAPTURE(BM_CpuPath, login, connectors::EventKind::kLogin)->ComputeStatistics("min", min_of);
BENCHMARK_CAPTURE(BM_CpuPath, order, connectors::EventKind::kOrder)->ComputeStatistics("min", min_of);

}  // namespace

BENCHMARK_MAIN();
