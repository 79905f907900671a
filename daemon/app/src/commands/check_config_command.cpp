// hbingest check-config FILE [--print-effective]: validates a config without connecting anywhere.
// Exit 0 and "ok: FILE", or exit 1 with every problem (config and key specs) on stderr.

#include <cstdio>
#include <string>
#include <vector>

#include "hbingest/app/commands.h"
#include "hbingest/config/loader.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/build_routes.h"
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
  // The routes that did load are built as `run` builds them (key specs, templates, row mappings)
  // even when other keys are wrong, so one run lists everything.
  try {
    (void)routing::build_routes(result.config, &warnings);
  } catch (const routing::RouteError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }

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
