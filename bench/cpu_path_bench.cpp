// The ingest CPU path without I/O: decode → row key → row → Thrift2 putMultiple bytes, for
// realistic login and order events (the `hbingest gen` generator's), the way the pipeline and a
// writer do it: the decoder, the key spec and the Thrift encoder are reused, rows go into
// batches of 500 (writer.batch_rows' default) and each full batch is encoded into the encoder's
// reused buffer. Reports events/s and heap allocations per event (operator new is counted below).
//
// Per input format (BM_CpuPath/<login|order>/<json|json_schema|avro|protobuf>): the same generated
// events, converted once into Confluent-framed Avro, Protobuf or JSON Schema (format_events.h) and
// decoded with schemas from a fake registry; before measuring, every event's rows (type, time, key,
// cells) must equal its JSON twin's, or the benchmark aborts: it would measure another workload.
//
//   build/bench/cpu_path_bench --benchmark_min_time=2 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// With repetitions, a `min` aggregate comes beside the mean and median: the machine is shared,
// and the fastest repetition is the one least disturbed by other processes.
#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fake_schema_registry.h"
#include "format_events.h"
#include "hbingest/connectors/event_generator.h"
#include "hbingest/connectors/source.h"
#include "hbingest/connectors/thrift2_put_encoder.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/row_mapping.h"

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

struct Workload {
  std::vector<connectors::SourceMessage> input;  // the format's bytes
  testing::FakeSchemaRegistry registry;
};

config::DecodeConfig decode_config(bench::Format format) {
  config::DecodeConfig config;  // the daemon's defaults: columns: fields, family d
  switch (format) {
    case bench::Format::json:
      config.format = config::EventFormat::json;
      break;
    case bench::Format::json_schema:
      config.format = config::EventFormat::json_schema;
      break;
    case bench::Format::avro:
      config.format = config::EventFormat::avro;
      break;
    case bench::Format::protobuf:
      config.format = config::EventFormat::protobuf;
      break;
  }
  return config;
}

struct Row {
  std::string key;
  event_formats::DecodedEvent event;
  std::vector<connectors::Cell> cells;
};

Row decode_row(event_formats::EventDecoder& decoder, const keyspec::KeySpec& spec, const routing::RowMapping& mapping,
               const connectors::SourceMessage& message) {
  Row row;
  if (auto invalid = decoder.decode({message.topic, message.payload, message.timestamp_ms}, row.event)) {
    throw std::runtime_error("offset " + std::to_string(message.offset) + ": " + invalid->reason + ": " +
                             invalid->message);
  }
  const keyspec::KafkaMeta meta{message.topic, message.partition, message.offset, message.timestamp_ms};
  if (auto error = spec.encode(decoder.fields(), meta, row.key)) throw std::runtime_error(error->message());
  routing::RowCells cells;
  if (auto error = mapping.apply({decoder.record(), &decoder.fields(), message.payload_bytes()}, cells)) {
    throw std::runtime_error(error->message);
  }
  row.cells = std::move(cells.cells);
  return row;
}

// Every message of `format` gives the row its JSON twin gives: type, time, TTL, row key, and every
// cell byte for byte, in the same order. Throws, naming the first difference.
void check_same_rows(const std::vector<connectors::SourceMessage>& json,
                     const std::vector<connectors::SourceMessage>& framed, event_formats::EventDecoder& decoder,
                     const keyspec::KeySpec& spec, const routing::RowMapping& mapping, bench::Format format) {
  event_formats::EventDecoder json_decoder(decode_config(bench::Format::json));
  for (std::size_t i = 0; i < json.size(); ++i) {
    const Row want = decode_row(json_decoder, spec, mapping, json[i]);
    const Row got = decode_row(decoder, spec, mapping, framed[i]);
    const auto differ = [&](const std::string& what) {
      return std::runtime_error(std::string(bench::to_string(format)) + " event " + std::to_string(i) + " (" +
                                std::string(json[i].payload_bytes()) + "): " + what + " differs from the JSON twin's");
    };
    if (got.key != want.key) throw differ("the row key");
    if (got.event.event_type != want.event.event_type) throw differ("the event type");
    if (got.event.time_ms != want.event.time_ms || got.event.ttl_ms != want.event.ttl_ms) throw differ("the time");
    if (got.cells.size() != want.cells.size()) throw differ("the number of cells");
    for (std::size_t c = 0; c < want.cells.size(); ++c) {
      const auto& a = got.cells[c];
      const auto& b = want.cells[c];
      if (a.family != b.family || a.qualifier != b.qualifier || a.value != b.value) {
        throw differ("cell " + b.qualifier + " ('" + a.qualifier + "' = '" + a.value + "' against '" + b.value + "')");
      }
    }
  }
}

// The messages of one kind in one format, converted and served once per process.
Workload& workload(connectors::EventKind kind, bench::Format format) {
  static std::map<std::pair<connectors::EventKind, bench::Format>, std::unique_ptr<Workload>> made;
  auto& slot = made[{kind, format}];
  if (slot) return *slot;
  static const bench::FormatEvents formats;
  slot = std::make_unique<Workload>();
  slot->input = messages(kind);
  for (auto& message : slot->input) message.payload = formats.convert(*message.payload, format);
  for (auto& schema : formats.schemas(format)) slot->registry.add(std::move(schema));
  return *slot;
}

// decode → key → row, as Pipeline::handle does for a valid event; encode per full batch, as a
// writer does.
void BM_CpuPath(benchmark::State& state, connectors::EventKind kind, bench::Format format) {
  auto& work = workload(kind, format);
  const auto& input = work.input;
  event_formats::EventDecoder decoder(decode_config(format), &work.registry);
  event_formats::DecodedEvent event;
  const auto spec = keyspec::KeySpec::preset("events", {{"buckets", "8"}});
  const auto mapping = routing::RowMapping::from_decode(decode_config(format));
  routing::RowCells cells;
  // Before measuring: the schemas fetched and parsed (as a running daemon has them), and the rows
  // compared with the JSON twins' (once per process: it decodes every event twice).
  static std::map<std::pair<connectors::EventKind, bench::Format>, bool> checked;
  if (!std::exchange(checked[{kind, format}], true)) {
    check_same_rows(messages(kind), input, decoder, spec, mapping, format);
  } else {
    for (const auto& message : input) decode_row(decoder, spec, mapping, message);
  }
  std::string key;
  connectors::Thrift2PutEncoder encoder(connectors::ThriftProtocolKind::binary);
  const std::string table = "default:events";
  std::vector<connectors::RowMutation> rows;
  rows.reserve(kBatchRows);
  std::size_t next = 0;
  std::size_t call_bytes = 0;

  // Under callgrind (bench/cpu_path_instructions.sh), count from here: the setup above decodes too.
  CALLGRIND_ZERO_STATS;
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
    if (auto error = mapping.apply({decoder.record(), &decoder.fields(), message.payload_bytes()}, cells)) {
      state.SkipWithError(error->message.c_str());
      break;
    }
    connectors::RowMutation row;
    row.row = key;
    row.cells = std::move(cells.cells);
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

void register_benchmarks() {
  for (const auto kind : {connectors::EventKind::kLogin, connectors::EventKind::kOrder}) {
    for (const auto format :
         {bench::Format::json, bench::Format::json_schema, bench::Format::avro, bench::Format::protobuf}) {
      const std::string name =
          "BM_CpuPath/" + std::string(connectors::to_string(kind)) + "/" + std::string(bench::to_string(format));
      benchmark::RegisterBenchmark(name.c_str(), BM_CpuPath, kind, format)->ComputeStatistics("min", min_of);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
