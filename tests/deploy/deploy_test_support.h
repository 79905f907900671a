#pragma once
// Helpers shared by the deploy/ artefact tests: repository paths, running a tool and capturing its
// output, temporary directories, and the metric families the built daemon exports.
// Not thread-safe (tests run one per process under ctest).

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

}  // namespace hbingest::deploy_test
