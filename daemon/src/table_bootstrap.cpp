#include "hbingest/daemon/table_bootstrap.h"

#include <set>
#include <stdexcept>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/daemon/connector_options.h"

namespace hbingest::daemon {

BootstrapReport bootstrap_tables(const config::Config& config, const Router& router) {
  BootstrapReport report;
  connectors::HBaseAdmin admin(thrift2_options(config.hbase));
  std::set<std::string> done;
  for (const auto& route : router.routes()) {
    if (!done.insert(route->table).second) continue;  // several routes may share a table
    const auto spec = table_spec(config, route->table, route->spec.split_keys());
    const auto result = admin.ensure_table(spec);
    switch (result.outcome) {
      case connectors::EnsureOutcome::created:
        report.lines.push_back("created " + route->table + " (family '" + spec.family.name + "', TTL " +
                               std::to_string(spec.family.ttl.count()) + " s, " +
                               std::to_string(spec.split_keys.size() + 1) + " regions)");
        break;
      case connectors::EnsureOutcome::already_matches:
        report.lines.push_back("ok " + route->table + " (exists and matches)");
        break;
      case connectors::EnsureOutcome::differs:
        report.differences = true;
        for (const auto& difference : result.differences) {
          report.lines.push_back("differs " + difference + " (left untouched)");
        }
        break;
    }
  }
  return report;
}

std::string ensure_dead_letter_topic(const config::Config& config) {
  constexpr int kPartitions = 1;  // dead letters are rare; one partition keeps them in order
  constexpr int kReplication = -1;  // the broker's default.replication.factor
  constexpr std::chrono::milliseconds kTimeout{30000};
  connectors::KafkaProducer admin(dead_letter_options(config).producer);
  const bool created = admin.create_topic(config.dlq.topic, kPartitions, kReplication,
                                          {{"max.message.bytes", "10485760"}}, kTimeout);
  return (created ? "created dead-letter topic " : "dead-letter topic exists: ") + config.dlq.topic;
}

void require_tables(const config::Config& config, const Router& router) {
  connectors::HBaseAdmin admin(thrift2_options(config.hbase));
  for (const auto& route : router.routes()) {
    const auto spec = table_spec(config, route->table, {});
    if (!admin.table_exists(spec.ns, spec.table)) {
      throw std::runtime_error("HBase table " + route->table + " does not exist: run `hbingest bootstrap --config " +
                               config.source.string() + "` or set table.create_table: true");
    }
  }
}

}  // namespace hbingest::daemon
