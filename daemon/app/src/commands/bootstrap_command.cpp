// hbingest bootstrap --config FILE: create the tables the routes write to (idempotent).

#include <iostream>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/logging.h"
#include "hbingest/app/wiring.h"
#include "hbingest/config/loader.h"
#include "hbingest/routing/build_routes.h"

namespace hbingest::app {

int bootstrap_command(const Args& args) {
  CLI::App cli{
      "Create namespace and tables for every route: column family with the TTL, VERSIONS 1, "
      "bloom filter, regions pre-split at the salt buckets. Existing tables are compared, never changed.",
      "hbingest bootstrap"};
  std::string config_path;
  cli.add_option("--config", config_path, "config file (YAML)")->required();
  if (auto exit = parse_command_line(cli, args)) return *exit;

  const config::Config config = config::load_config(config_path);
  const routing::RouteSet routes = routing::build_routes(config);
  // Bootstrap talks to both: HBase for the tables, Kafka for the dead-letter topic.
  // Log lines (the Kerberos logins' among them) go to stderr: stdout carries the report.
  setup_logging(config.logging);
  set_kafka_ccache_env(config);
  const KerberosLogins kerberos_logins(config, KerberosLinks{});
  connectors::HBaseAdmin admin(thrift2_options(config.hbase));
  const ingest::BootstrapReport report = ingest::bootstrap_tables(admin, route_tables(routes), table_settings(config));
  for (const auto& line : report.lines) std::cout << line << '\n';
  connectors::KafkaProducer kafka_admin(dead_letter_options(config).producer);
  std::cout << ingest::ensure_dead_letter_topic(kafka_admin, config.dlq.topic) << '\n';
  if (report.differences) {
    std::cerr << "hbingest bootstrap: existing tables differ from " << config_path
              << "; change the table by hand or the config, hbingest never alters a table\n";
    return 1;
  }
  return 0;
}

}  // namespace hbingest::app
