// Parallel n-way scan reader against a real HBase Thrift2 server: loads `--rows` synthetic
// login/order rows (event times spread over the last `--minutes`) into one pre-split table per
// bucket count, then times 1-minute and whole-window queries, parallel and serial, in the same run.
// `--via NAME=HOST:PORT` (repeatable) runs the queries through other endpoints of the same gateway
// as well, e.g. Toxiproxy with a latency toxic (bench/query_latency.sh sets that up); the rows are
// always loaded through --thrift2.
//
//   build/bench/query_bench --thrift2 127.0.0.1:19090 --rows 1000000 --buckets 10,20,100 --repeat 20
//
// Prints a Markdown table: p50/p99 latency per (path, buckets, range, limit, mode) and the speedup.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"

namespace {

using namespace hbingest;
using Clock = std::chrono::steady_clock;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The standalone region server stalls on memstore flushes under a bulk load; like the daemon's
// writers, wait and try again instead of giving up.
void write_with_retry(connectors::RowSink& sink, const std::string& table,
                      std::span<const connectors::RowMutation> rows) {
  constexpr int kAttempts = 20;
  for (int attempt = 1;; ++attempt) {
    try {
      if (!sink.write(table, rows, {}).empty()) throw std::runtime_error("HBase rejected benchmark rows");
      return;
    } catch (const connectors::HBaseError& e) {
      if (!e.retriable() || attempt == kAttempts) throw;
      std::fprintf(stderr, "load: retrying after: %s\n", e.what());
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
}

// Writes `rows` events with 4 writer threads; returns rows/s.
double load(const connectors::Thrift2Options& thrift2, const std::string& table, const keyspec::KeySpec& spec,
            std::size_t rows, std::int64_t window_start, std::int64_t window_ms) {
  constexpr int kWriters = 4;
  constexpr std::size_t kBatch = 1000;
  const auto started = Clock::now();
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto sink = connectors::make_thrift2_sink(thrift2);
      std::mt19937_64 rng(static_cast<std::uint64_t>(w));
      std::vector<connectors::RowMutation> batch;
      std::string key;
      for (std::size_t i = static_cast<std::size_t>(w); i < rows; i += kWriters) {
        const std::int64_t ts = window_start + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(window_ms));
        const std::string type = i % 2 ? "login" : "order";
        const std::string user = "u" + std::to_string(rng() % 100000);
        keyspec::MapEventFields event({{"event_id", type}, {"ts", ts}, {"user_id", user}});
        const keyspec::KafkaMeta meta{"bench", static_cast<std::int32_t>(i % 4), static_cast<std::int64_t>(i / 4), ts};
        if (auto error = spec.encode(event, meta, key)) throw std::runtime_error(error->message());
        batch.push_back({key,
                         {{"d", "event_id", type},
                          {"d", "ts", std::to_string(ts)},
                          {"d", "user_id", user},
                          {"d", "ip", "10.1.2.3"}},
                         ts,
                         std::nullopt});
        if (batch.size() == kBatch) {
          write_with_retry(*sink, table, batch);
          batch.clear();
        }
      }
      if (!batch.empty()) write_with_retry(*sink, table, batch);
    });
  }
  for (auto& writer : writers) writer.join();
  return static_cast<double>(rows) / std::chrono::duration<double>(Clock::now() - started).count();
}

struct Timing {
  double p50_ms = 0;
  double p99_ms = 0;
  std::size_t rows = 0;
};

Timing time_query(query::QueryEngine& engine, const query::Query& q, bool serial, int repeat) {
  std::vector<double> samples;
  std::size_t rows = 0;
  engine.run(q, {std::nullopt, serial});  // warm-up: connections, block cache
  for (int i = 0; i < repeat; ++i) {
    const auto started = Clock::now();
    rows = engine.run(q, {std::chrono::milliseconds(120000), serial}).rows.size();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  }
  std::sort(samples.begin(), samples.end());
  const auto at = [&](double q_) {
    return samples[std::min(samples.size() - 1, static_cast<std::size_t>(q_ * static_cast<double>(samples.size())))];
  };
  return {at(0.50), at(0.99), rows};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"n-way scan reader benchmark against a real HBase Thrift2 server"};
  std::string endpoint = std::getenv("HBINGEST_THRIFT2") ? std::getenv("HBINGEST_THRIFT2") : "127.0.0.1:19090";
  std::size_t rows = 1'000'000;
  std::vector<int> bucket_counts{10, 20, 100};
  int repeat = 20;
  int minutes = 10;
  int concurrency = 16;
  bool keep = false;
  std::vector<std::string> vias;
  app.add_option("--thrift2", endpoint, "Thrift2 endpoint host:port");
  app.add_option("--rows", rows, "rows per table");
  app.add_option("--buckets", bucket_counts, "salt bucket counts, one table each")->delimiter(',');
  app.add_option("--repeat", repeat, "timed runs per query");
  app.add_option("--minutes", minutes, "event-time window the rows spread over");
  app.add_option("--concurrency", concurrency, "scans in flight (parallel mode)");
  std::string mode = "both";
  app.add_option("--mode", mode, "parallel, serial or both (one mode alone: to account the servers' CPU per mode)")
      ->check(CLI::IsMember({"both", "parallel", "serial"}))
      ->capture_default_str();
  app.add_option("--via", vias, "NAME=HOST:PORT: also query through this endpoint (repeatable)");
  app.add_flag("--keep", keep, "keep the tables (default: delete them at the end)");
  CLI11_PARSE(app, argc, argv);

  connectors::Thrift2Options thrift2;
  thrift2.endpoints = {endpoint};
  thrift2.read_timeout = std::chrono::seconds(120);
  connectors::HBaseAdmin admin(thrift2);
  const std::int64_t window_ms = static_cast<std::int64_t>(minutes) * 60'000;
  const std::int64_t window_start = now_ms() - window_ms;

  // Where the queries go: the loading endpoint itself, then every --via.
  std::vector<std::pair<std::string, connectors::Thrift2Options>> paths{{"direct", thrift2}};
  for (const auto& via : vias) {
    const auto eq = via.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == via.size()) {
      std::fprintf(stderr, "--via %s: expected NAME=HOST:PORT\n", via.c_str());
      return 2;
    }
    auto options = thrift2;
    options.endpoints = {via.substr(eq + 1)};
    paths.emplace_back(via.substr(0, eq), std::move(options));
  }

  std::printf(
      "| path | buckets | range | limit | rows returned | parallel p50 / p99 ms | serial p50 / p99 ms | speedup (p50) "
      "|\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const int buckets : bucket_counts) {
    auto spec = std::make_shared<const keyspec::KeySpec>(
        keyspec::KeySpec::preset("events", {{"buckets", std::to_string(buckets)}}));
    const std::string table = "bench_query_" + std::to_string(buckets);
    if (admin.table_exists("default", table)) admin.delete_table("default", table);
    connectors::TableSpec table_spec;
    table_spec.table = table;
    table_spec.families[0].ttl = std::chrono::hours(24);  // outlive the benchmark
    table_spec.split_keys = spec->split_keys();
    admin.ensure_table(table_spec);
    const double rate = load(thrift2, table, *spec, rows, window_start, window_ms);
    std::fprintf(stderr, "loaded %zu rows into %s (%d regions) at %.0f rows/s\n", rows, table.c_str(), buckets, rate);

    struct Case {
      const char* range;
      std::int64_t from, to;
      std::size_t limit;
    };
    const std::int64_t mid = window_start + window_ms / 2;
    const Case cases[] = {{"1 min", mid, mid + 60'000, 1000},
                          {"1 min", mid, mid + 60'000, 0},
                          {"10 min", window_start, window_start + window_ms, 1000}};
    for (const auto& [path, options] : paths) {
      auto factory = connectors::make_thrift2_scanner_factory(options, concurrency);
      query::QueryEngine engine(*factory,
                                query::EngineOptions{concurrency, 1000, 2, std::chrono::milliseconds(120000)});
      for (const auto& c : cases) {
        query::Query q;
        q.table = table;
        q.spec = spec;
        q.event_id = "login";
        q.from_ms = c.from;
        q.to_ms = c.to;
        q.limit = c.limit;
        const Timing parallel = mode == "serial" ? Timing{} : time_query(engine, q, false, repeat);
        const Timing serial = mode == "parallel" ? Timing{} : time_query(engine, q, true, repeat);
        // A mode not run prints "-", and so does the speedup without both.
        const auto cell = [](bool ran, const char* format, double a, double b = 0) {
          if (!ran) return std::string("-");
          char text[64];
          std::snprintf(text, sizeof(text), format, a, b);
          return std::string(text);
        };
        const bool ran_parallel = mode != "serial";
        const bool ran_serial = mode != "parallel";
        std::printf("| %s | %d | %s | %s | %zu | %s | %s | %s |\n", path.c_str(), buckets, c.range,
                    c.limit ? std::to_string(c.limit).c_str() : "none", std::max(parallel.rows, serial.rows),
                    cell(ran_parallel, "%.1f / %.1f", parallel.p50_ms, parallel.p99_ms).c_str(),
                    cell(ran_serial, "%.1f / %.1f", serial.p50_ms, serial.p99_ms).c_str(),
                    cell(ran_parallel && ran_serial, "%.1f×", serial.p50_ms / parallel.p50_ms).c_str());
        std::fflush(stdout);
      }
    }
    if (!keep) admin.delete_table("default", table);
  }
  return 0;
}
