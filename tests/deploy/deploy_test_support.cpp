#include "deploy_test_support.h"

#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace hbingest::deploy_test {

namespace {

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

struct PipeCloser {
  void operator()(FILE* pipe) const noexcept {
    if (pipe != nullptr) pclose(pipe);
  }
};

// The family a series name belongs to: itself, or a histogram's name without _bucket/_sum/_count.
std::string family_of(const std::string& series, const std::map<std::string, MetricFamilyInfo>& families) {
  if (families.contains(series)) return series;
  for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
    if (!series.ends_with(suffix)) continue;
    const auto base = families.find(series.substr(0, series.size() - suffix.size()));
    if (base != families.end() && base->second.type == MetricType::histogram) return base->first;
  }
  return {};
}

}  // namespace

std::filesystem::path source_dir() { return HBINGEST_SOURCE_DIR; }
std::filesystem::path hbingest_binary() { return HBINGEST_BINARY; }

CommandResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  if (argv.empty()) throw std::invalid_argument("run: empty command");
  std::string command;
  for (const auto& [name, value] : env) command += name + "=" + shell_quote(value) + " ";
  for (const auto& arg : argv) command += shell_quote(arg) + " ";
  command += "2>&1";
  std::unique_ptr<FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) throw std::runtime_error("popen failed for '" + command + "': " + std::strerror(errno));
  CommandResult result;
  std::array<char, 4096> buffer{};
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get()))
    result.output.append(buffer.data(), n);
  const int status = pclose(pipe.release());
  result.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  return result;
}

bool have_program(const std::string& program) {
  return run({"sh", "-c", "command -v \"$0\" >/dev/null", program}).exit_code == 0;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

TempDir::TempDir() {
  std::random_device random;
  path_ = std::filesystem::temp_directory_path() / ("hbingest-deploy-test-" + std::to_string(random()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

const std::string& metrics_catalog_text() {
  static const std::string text = [] {
    const auto result = run({hbingest_binary().string(), "metrics-catalog"});
    if (result.exit_code != 0) {
      throw std::runtime_error("hbingest metrics-catalog exited " + std::to_string(result.exit_code) + ": " +
                               result.output);
    }
    return result.output;
  }();
  return text;
}

const std::map<std::string, MetricFamilyInfo>& daemon_metric_families() {
  static const auto families = [] {
    static const std::regex kType(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) ([a-z]+)$)");
    static const std::regex kSample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? \S+$)");
    static const std::regex kLabel(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*")re");
    std::map<std::string, MetricFamilyInfo> out;
    std::istringstream lines(metrics_catalog_text());
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (std::regex_match(line, match, kType)) {
        const std::string type = match[2];
        out[match[1]].type = type == "counter"     ? MetricType::counter
                             : type == "gauge"     ? MetricType::gauge
                             : type == "histogram" ? MetricType::histogram
                                                   : MetricType::other;
      } else if (!line.starts_with("#") && std::regex_match(line, match, kSample)) {
        const std::string family = family_of(match[1], out);
        if (family.empty()) throw std::runtime_error("metrics-catalog: sample without a # TYPE line: " + line);
        const std::string labels = match[3];
        for (std::sregex_iterator it(labels.begin(), labels.end(), kLabel), end; it != end; ++it) {
          out[family].labels.insert((*it)[1]);
        }
      }
    }
    return out;
  }();
  return families;
}

std::set<std::string> daemon_label_names() {
  std::set<std::string> labels = {"job", "instance"};
  for (const auto& [name, family] : daemon_metric_families()) labels.insert(family.labels.begin(), family.labels.end());
  return labels;
}

std::vector<std::string> check_promql_names(const std::string& expr) {
  const auto& families = daemon_metric_families();
  static const auto labels = daemon_label_names();
  static const std::regex kMetric(R"(hbingest_[a-z0-9_]+)");
  static const std::regex kGrouping(R"re(\b(by|without)\s*\(([^)]*)\))re");
  static const std::regex kLabel(R"([a-zA-Z_][a-zA-Z0-9_]*)");
  static const std::regex kSelector(R"(([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^{}]*)\})");
  static const std::regex kMatcher(R"re(([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*")re");
  std::vector<std::string> problems;
  for (std::sregex_iterator it(expr.begin(), expr.end(), kMetric), end; it != end; ++it) {
    const std::string name = it->str();
    if (family_of(name, families).empty()) problems.push_back("metric '" + name + "' is not exported by the daemon");
  }
  for (std::sregex_iterator it(expr.begin(), expr.end(), kGrouping), end; it != end; ++it) {
    const std::string list = (*it)[2];
    for (std::sregex_iterator label(list.begin(), list.end(), kLabel), none; label != none; ++label) {
      if (!labels.contains(label->str())) problems.push_back("label '" + label->str() + "' is never set by the daemon");
    }
  }
  for (std::sregex_iterator it(expr.begin(), expr.end(), kSelector), end; it != end; ++it) {
    // A selector on one of our series may only match that family's labels (and job, instance).
    const std::string series = (*it)[1];
    const std::string family = series.starts_with("hbingest_") ? family_of(series, families) : std::string();
    std::set<std::string> allowed = labels;
    if (!family.empty()) {
      allowed = families.at(family).labels;
      allowed.insert({"job", "instance"});
      if (family != series) allowed.erase("le");  // only the _bucket series carries le
      if (series.ends_with("_bucket")) allowed.insert("le");
    }
    const std::string matchers = (*it)[2];
    for (std::sregex_iterator m(matchers.begin(), matchers.end(), kMatcher), none; m != none; ++m) {
      const std::string label = (*m)[1];
      if (label != "__name__" && !allowed.contains(label)) {
        problems.push_back("label '" + label + "' is not set on " + (family.empty() ? "any series" : series) +
                           " by the daemon");
      }
    }
  }
  return problems;
}

double config_mib(const std::string& size) {
  std::smatch m;
  if (!std::regex_match(size, m, std::regex(R"((\d+)(KiB|MiB|GiB))"))) throw std::invalid_argument(size);
  const double n = std::stod(m[1]);
  return m[2] == "KiB" ? n / 1024 : m[2] == "MiB" ? n : n * 1024;
}

ResourceBound resource_bound(const YAML::Node& c, bool ingest) {
  constexpr double kBaseMiB = 64;         // code, heap slack, thread stacks
  constexpr double kRdkafkaQueueMiB = 4;  // queued.max.messages.kbytes: KafkaSource's default
  constexpr double kFetchMiB = 50;        // fetch.max.bytes default
  // While the largest event is decoded, simdjson's buffers are ~16 times its size (an 8 MiB event:
  // 124 MiB); an event above 64 KiB gives them back after it (keyspec/src/json_event.cpp).
  constexpr double kDecodeBuffersPerEventByte = 16;
  constexpr int kRdkafkaThreads = 2 * (3 + 2 * 6);  // two clients, six brokers
  const int queries = c["http"]["max_concurrent_queries"].as<int>();
  const int scans = c["query"]["concurrency"].as<int>();
  ResourceBound bound;
  // A query holds rows up to its response budget (QueryOptions::max_bytes), whatever their size.
  const double response_mib = config_mib(c["http"]["max_response_bytes"].as<std::string>());
  bound.memory_mib = kBaseMiB + queries * response_mib;
  // main + signal watcher; the HTTP acceptor, its workers and the thread that answers refused
  // connections; one producer thread per running query; the health listener (acceptor, 4 workers,
  // refusals) when configured; the query scans.
  constexpr int kHealthListenerThreads = 1 + 4 + 1;
  bound.threads = 2 + (1 + c["http"]["workers"].as<int>() + 1) + queries + kHealthListenerThreads + queries * scans;
  if (ingest) {
    const int writers = c["writer"]["writers"].as<int>();
    bound.memory_mib += 2 * config_mib(c["writer"]["max_inflight_bytes"].as<std::string>()) + kRdkafkaQueueMiB +
                        kFetchMiB + writers * config_mib(c["writer"]["batch_max_bytes"].as<std::string>()) +
                        kDecodeBuffersPerEventByte * config_mib(c["decode"]["max_event_bytes"].as<std::string>());
    bound.threads += 2 + writers + kRdkafkaThreads;
  } else {
    bound.memory_mib += queries * response_mib;  // the responses being built
  }
  return bound;
}

}  // namespace hbingest::deploy_test
