#include "hbingest/ingest/table_bootstrap.h"

#include <set>
#include <stdexcept>

#include "hbingest/connectors/hbase_types.h"

namespace hbingest::ingest {

connectors::TableSpec table_spec(const TableSettings& settings, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys) {
  const auto name = connectors::TableName::parse(qualified_table);
  connectors::TableSpec spec;
  spec.ns = name.ns;
  spec.table = name.table;
  spec.family.name = settings.family;
  spec.family.ttl = settings.ttl;
  spec.family.max_versions = 1;
  spec.family.bloom_filter = settings.bloom_filter;
  spec.family.compression = settings.compression;
  spec.split_keys = split_keys;
  return spec;
}

BootstrapReport bootstrap_tables(connectors::HBaseAdmin& admin, const std::vector<RouteTable>& tables,
                                 const TableSettings& settings) {
  BootstrapReport report;
  std::set<std::string> done;
  for (const auto& route : tables) {
    if (!done.insert(route.table).second) continue;  // several routes may share a table
    const auto spec = table_spec(settings, route.table, route.split_keys);
    const auto result = admin.ensure_table(spec);
    switch (result.outcome) {
      case connectors::EnsureOutcome::created:
        report.lines.push_back("created " + route.table + " (family '" + spec.family.name + "', TTL " +
                               std::to_string(spec.family.ttl.count()) + " s, " +
                               std::to_string(spec.split_keys.size() + 1) + " regions)");
        break;
      case connectors::EnsureOutcome::already_matches:
        report.lines.push_back("ok " + route.table + " (exists and matches)");
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

std::string ensure_dead_letter_topic(connectors::KafkaProducer& admin, const std::string& topic) {
  constexpr int kPartitions = 1;    // dead letters are rare; one partition keeps them in order
  constexpr int kReplication = -1;  // the broker's default.replication.factor
  constexpr std::chrono::milliseconds kTimeout{30000};
  const bool created =
      admin.create_topic(topic, kPartitions, kReplication, {{"max.message.bytes", "10485760"}}, kTimeout);
  return (created ? "created dead-letter topic " : "dead-letter topic exists: ") + topic;
}

void require_tables(connectors::HBaseAdmin& admin, const std::vector<RouteTable>& tables, const std::string& remedy) {
  for (const auto& route : tables) {
    const auto name = connectors::TableName::parse(route.table);
    if (!admin.table_exists(name.ns, name.table)) {
      throw std::runtime_error("HBase table " + route.table + " does not exist: " + remedy);
    }
  }
}

}  // namespace hbingest::ingest
