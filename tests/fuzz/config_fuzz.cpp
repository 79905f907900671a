// libFuzzer target: arbitrary YAML text → config::try_load_config_text.
// Properties: loading never crashes and never throws (problems are returned, not thrown); a config
// that loads without problems prints (effective_config_yaml) to YAML that loads again without
// problems and prints the same (secrets are "***" from the first print on).
// ${file:PATH} references are fuzzed too: the loader reads only regular files of at most 64 KiB
// (it used to read /dev/zero until memory ran out and block on /dev/stdin).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hbingest/config/loader.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  static const bool env_set = [] {
    setenv("HBINGEST_FUZZ_TOKEN", "s3cret", 1);
    setenv("HBINGEST_FUZZ_BROKERS", "kafka-1:9092", 1);
    return true;
  }();
  (void)env_set;

  auto loaded = hbingest::config::try_load_config_text(yaml, "fuzz.yaml");
  for (const auto& problem : loaded.problems) check(!problem.empty());
  if (!loaded.problems.empty()) return 0;

  const std::string printed = hbingest::config::effective_config_yaml(loaded.config);
  const auto reloaded = hbingest::config::try_load_config_text(printed, "printed.yaml");
  check(reloaded.problems.empty());
  check(hbingest::config::effective_config_yaml(reloaded.config) == printed);
  return 0;
}
