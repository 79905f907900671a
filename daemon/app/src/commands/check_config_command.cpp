// hbingest check-config FILE [--print-effective]: validates a config without connecting anywhere.
// Exit 0 and "ok: FILE", or exit 1 with every problem (config and key specs) on stderr.

#include <cstdio>
#include <string>
#include <vector>

#include "hbingest/app/commands.h"
#include "hbingest/app/key_uniqueness.h"
#include "hbingest/app/wiring.h"
#include "hbingest/config/loader.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/support/secrets.h"

namespace hbingest::app {

namespace {

constexpr const char* kUsage =
    "usage: hbingest check-config FILE [--print-effective]\n"
    "  Validates FILE: YAML, keys, types, ranges, ${ENV}/${file:PATH} secrets, cross-field rules and\n"
    "  each route's key spec. Prints \"ok: FILE\" and exits 0, or lists every problem and exits 1.\n"
    "  Unsafe settings (auto.offset.reset latest, dead-letter acks, an open HTTP port...) are\n"
    "  printed as warnings; they do not change the exit status. Secrets are never printed.\n"
    "  --print-effective  also print the effective config (defaults included, secrets as ***)\n";

// Builds the route's key spec the way `run` does; a problem line per spec problem.
void check_key_spec(const config::Config& config, const config::RouteConfig& route, const std::string& name,
                    std::vector<std::string>& problems, std::vector<std::string>& warnings) {
  if (!route.preset && !route.key_file && !route.key_yaml) return;  // the loader reported it already
  try {
    const keyspec::KeySpec spec = build_key_spec(config, route, name);
    for (const auto& warning : spec.warnings()) warnings.push_back(route.key_source + ": " + name + ": " + warning);
    for (const auto& warning : check_key_uniqueness(config, spec, name).warnings) {
      warnings.push_back(route.key_source + ": " + warning);
    }
  } catch (const keyspec::SpecError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
}

}  // namespace

int check_config_command(const Args& args) {
  std::string file;
  bool print_effective = false;
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--print-effective") {
      print_effective = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "check-config: unknown option '%s'\n%s", arg.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = arg;
    } else {
      std::fprintf(stderr, "check-config: one FILE only, got '%s' and '%s'\n%s", file.c_str(), arg.c_str(), kUsage);
      return 2;
    }
  }
  if (file.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }

  config::LoadResult result = config::try_load_config(file);
  std::vector<std::string> problems = std::move(result.problems);
  std::vector<std::string> warnings = std::move(result.warnings);
  // Key specs of the routes that did load are checked even when other keys are wrong, so one run
  // lists everything.
  for (std::size_t i = 0; i < result.config.routes.size(); ++i) {
    check_key_spec(result.config, result.config.routes[i], "routes[" + std::to_string(i) + "]", problems, warnings);
  }
  if (result.config.default_route)
    check_key_spec(result.config, *result.config.default_route, "default_route", problems, warnings);

  // The loader already keeps secrets out of its lines; a key spec's lines pass the same scrubber.
  for (const auto& warning : warnings)
    std::fprintf(stderr, "warning: %s\n", support::scrub_registered(warning).c_str());
  if (!problems.empty()) {
    for (const auto& problem : problems) std::fprintf(stderr, "%s\n", support::scrub_registered(problem).c_str());
    std::fprintf(stderr, "%s: %zu problem%s\n", file.c_str(), problems.size(), problems.size() == 1 ? "" : "s");
    return 1;
  }
  if (print_effective) {
    const std::string yaml = config::effective_config_yaml(result.config);
    std::fwrite(yaml.data(), 1, yaml.size(), stdout);
    // As a YAML comment, so the output stays loadable.
    std::printf("# ok: %s\n", file.c_str());
  } else {
    std::printf("ok: %s\n", file.c_str());
  }
  return 0;
}

}  // namespace hbingest::app
