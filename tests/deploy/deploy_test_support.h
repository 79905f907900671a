#pragma once
// Helpers shared by the deploy/ artefact tests: repository paths, running a tool and capturing its
// output, temporary directories, and the metric families the built daemon exports.
// Not thread-safe (tests run one per process under ctest).

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hbingest::deploy_test {

// The repository root and the built hbingest binary (compile definitions from CMake).
std::filesystem::path source_dir();
std::filesystem::path hbingest_binary();

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] with the arguments through /bin/sh, each argument quoted; never throws on a non-zero
// exit (the caller asserts on it). `env` entries are set for the child only.
CommandResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});

// True when `program` is found on PATH.
bool have_program(const std::string& program);

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& text);

// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

enum class MetricType { counter, gauge, histogram, other };

// One family of the daemon's exposition: its type and the label names its samples carry (for a
// histogram the `le` of its _bucket series included).
struct MetricFamilyInfo {
  MetricType type = MetricType::other;
  std::set<std::string> labels;
};

// `hbingest metrics-catalog`'s output: the exposition of every family the daemon registers, from
// the built binary (run once per test process). Throws when the command fails.
const std::string& metrics_catalog_text();

// The families in that exposition, parsed from its # TYPE lines and samples.
const std::map<std::string, MetricFamilyInfo>& daemon_metric_families();

// Label names the daemon's families carry, plus the labels Prometheus adds (job, instance).
std::set<std::string> daemon_label_names();

// The problems with one PromQL expression: hbingest_* names the daemon does not export (with the
// _bucket/_sum/_count suffixes allowed on histograms only), matchers in `name{...}` on labels that
// family does not carry, and `by (...)`/`without (...)` labels no family carries. Empty when the
// expression is fine.
std::vector<std::string> check_promql_names(const std::string& expr);

// What a daemon with config `effective` (check-config --print-effective) may hold at worst, as the
// systemd units' comments write it out: in-flight bytes and as much again in dead letters,
// librdkafka's prefetch queue (64 MiB) and one fetch (50 MiB), a Thrift copy of each writer's batch,
// the decoder's parse buffers for the largest event (~16 x decode.max_event_bytes),
// the queries' rows (concurrent queries x http.max_response_bytes: a query's chunks are bounded by
// its response budget) and 64 MiB of base; `serve` (ingest false) holds the queries and their
// responses (max_response_bytes each) only. Threads:
// main, signals, HTTP listener and pool (max_concurrent_queries + 2), the scans, and for ingest the
// progress reporter, table watch, writers and librdkafka (two clients, six brokers: 30).
struct ResourceBound {
  double memory_mib = 0;
  int threads = 0;
};
ResourceBound resource_bound(const YAML::Node& effective, bool ingest);

// MiB in a size the config prints ("256MiB", "2MiB", "512KiB").
double config_mib(const std::string& size);

}  // namespace hbingest::deploy_test
