// hbingest bootstrap --config FILE: create the tables the routes write to (idempotent).

#include <iostream>

#include "hbingest/config/loader.h"
#include "hbingest/daemon/command_line.h"
#include "hbingest/daemon/commands.h"
#include "hbingest/daemon/router.h"
#include "hbingest/daemon/table_bootstrap.h"

namespace hbingest::daemon {

int bootstrap_command(const Args& args) {
  CLI::App cli{"Create namespace and tables for every route: column family with the TTL, VERSIONS 1, "
               "bloom filter, regions pre-split at the salt buckets. Existing tables are compared, never changed.",
               "hbingest bootstrap"};
  std::string config_path;
  cli.add_option("--config", config_path, "config file (YAML)")->required();
  if (auto exit = parse_command_line(cli, args)) return *exit;

  const config::Config config = config::load_config(config_path);
  const Router router(config);
  const BootstrapReport report = bootstrap_tables(config, router);
  for (const auto& line : report.lines) std::cout << line << '\n';
  std::cout << ensure_dead_letter_topic(config) << '\n';
  if (report.differences) {
    std::cerr << "hbingest bootstrap: existing tables differ from " << config_path
              << "; change the table by hand or the config, hbingest never alters a table\n";
    return 1;
  }
  return 0;
}

}  // namespace hbingest::daemon
