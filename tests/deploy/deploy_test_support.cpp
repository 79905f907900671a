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

// Source files whose metric registrations the daemon exposes at /metrics.
std::vector<std::filesystem::path> metric_source_files() {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"daemon", "connectors", "metrics/src"}) {
    const auto root = source_dir() / dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.path().extension() == ".cpp") files.push_back(entry.path());
    }
  }
  return files;
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
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) result.output.append(buffer.data(), n);
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

std::map<std::string, MetricType> daemon_metric_families() {
  static const std::regex kRegistration(R"re((counter|gauge|histogram)_family\(\s*"(hbingest_[a-z0-9_]+)")re");
  std::map<std::string, MetricType> families;
  for (const auto& file : metric_source_files()) {
    const std::string text = read_file(file);
    for (std::sregex_iterator it(text.begin(), text.end(), kRegistration), end; it != end; ++it) {
      const std::string type = (*it)[1];
      families[(*it)[2]] = type == "counter" ? MetricType::counter
                           : type == "gauge" ? MetricType::gauge
                                             : MetricType::histogram;
    }
  }
  return families;
}

std::set<std::string> daemon_label_names() {
  // Children are added as add({{"topic", ...}, {"partition", ...}}): a quoted name opening a pair.
  static const std::regex kLabelPair(R"re(\{\s*"([a-z_][a-z0-9_]*)"\s*,)re");
  std::set<std::string> labels = {"job", "instance", "le"};
  for (const auto& file : metric_source_files()) {
    const std::string text = read_file(file);
    if (text.find("_family(") == std::string::npos) continue;
    for (std::sregex_iterator it(text.begin(), text.end(), kLabelPair), end; it != end; ++it) labels.insert((*it)[1]);
  }
  return labels;
}

std::vector<std::string> check_promql_names(const std::string& expr) {
  static const auto families = daemon_metric_families();
  static const auto labels = daemon_label_names();
  static const std::regex kMetric(R"(hbingest_[a-z0-9_]+)");
  static const std::regex kGrouping(R"re(\b(by|without)\s*\(([^)]*)\))re");
  static const std::regex kLabel(R"([a-zA-Z_][a-zA-Z0-9_]*)");
  static const std::regex kSelector(R"(\{([^{}]*)\})");
  static const std::regex kMatcher(R"re(([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*")re");
  std::vector<std::string> problems;
  for (std::sregex_iterator it(expr.begin(), expr.end(), kMetric), end; it != end; ++it) {
    const std::string name = it->str();
    if (families.contains(name)) continue;
    bool histogram_series = false;
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (name.ends_with(suffix)) {
        const auto base = families.find(name.substr(0, name.size() - suffix.size()));
        histogram_series = histogram_series || (base != families.end() && base->second == MetricType::histogram);
      }
    }
    if (!histogram_series) problems.push_back("metric '" + name + "' is not registered by the daemon");
  }
  for (std::sregex_iterator it(expr.begin(), expr.end(), kGrouping), end; it != end; ++it) {
    const std::string list = (*it)[2];
    for (std::sregex_iterator label(list.begin(), list.end(), kLabel), none; label != none; ++label) {
      if (!labels.contains(label->str())) problems.push_back("label '" + label->str() + "' is never set by the daemon");
    }
  }
  for (std::sregex_iterator it(expr.begin(), expr.end(), kSelector), end; it != end; ++it) {
    const std::string matchers = (*it)[1];
    for (std::sregex_iterator m(matchers.begin(), matchers.end(), kMatcher), none; m != none; ++m) {
      const std::string label = (*m)[1];
      if (label != "__name__" && !labels.contains(label)) {
        problems.push_back("label '" + label + "' is never set by the daemon");
      }
    }
  }
  return problems;
}

}  // namespace hbingest::deploy_test
