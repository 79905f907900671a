// keyspec hot paths: encode with the default (events) spec, sort_key, decode, planning.
#include <benchmark/benchmark.h>

#include <string>

#include "hbingest/keyspec/key_spec.h"

namespace {

using hbingest::keyspec::EventFields;
using hbingest::keyspec::FieldValue;

// What the pipeline hands over: a parsed event with direct field access, no map.
class TwoFields final : public EventFields {
 public:
  std::optional<FieldValue> field(std::string_view name) const override {
    if (name == "event_id") return FieldValue{std::string_view(event_id)};
    if (name == "ts") return FieldValue{ts};
    return std::nullopt;
  }
  std::string event_id = "login";
  std::int64_t ts = 1700000000123;
};

void BM_EncodeEvents(benchmark::State& state) {
  const auto spec = hbingest::keyspec::KeySpec::preset("events");
  TwoFields event;
  hbingest::keyspec::KafkaMeta meta;
  meta.partition = 3;
  std::string key;
  for (auto _ : state) {
    ++meta.offset;
    event.ts += 7;
    auto err = spec.encode(event, meta, key);
    benchmark::DoNotOptimize(err);
    benchmark::DoNotOptimize(key.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeEvents);

void BM_EncodeTimelineMd5(benchmark::State& state) {
  const auto spec = hbingest::keyspec::KeySpec::preset("timeline", {{"user_field", "event_id"}});
  TwoFields event;
  std::string key;
  for (auto _ : state) {
    event.ts += 7;
    auto err = spec.encode(event, {}, key);
    benchmark::DoNotOptimize(err);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeTimelineMd5);

void BM_SortKey(benchmark::State& state) {
  const auto spec = hbingest::keyspec::KeySpec::preset("events");
  std::string key;
  hbingest::keyspec::KafkaMeta meta;
  meta.offset = 42;
  (void)spec.encode(TwoFields{}, meta, key);
  for (auto _ : state) benchmark::DoNotOptimize(spec.sort_key(key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SortKey);

void BM_Decode(benchmark::State& state) {
  const auto spec = hbingest::keyspec::KeySpec::preset("events");
  std::string key;
  (void)spec.encode(TwoFields{}, {}, key);
  for (auto _ : state) benchmark::DoNotOptimize(spec.decode(key));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Decode);

void BM_PlanEventTimeRange(benchmark::State& state) {
  const auto spec = hbingest::keyspec::KeySpec::preset("events");
  hbingest::keyspec::PlanRequest req;
  req.equals = {{"event", "login"}};
  req.from_ms = 1700000000000;
  req.to_ms = 1700000600000;
  for (auto _ : state) benchmark::DoNotOptimize(spec.plan(req));
}
BENCHMARK(BM_PlanEventTimeRange);

}  // namespace

BENCHMARK_MAIN();
