#include "hbingest/ingest/table_bootstrap.h"

#include <algorithm>
#include <stdexcept>

#include "hbingest/connectors/hbase_types.h"

namespace hbingest::ingest {

connectors::TableSpec table_spec(const TableSettings& settings, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys, const std::vector<std::string>& families) {
  const auto name = connectors::TableName::parse(qualified_table);
  connectors::TableSpec spec;
  spec.ns = name.ns;
  spec.table = name.table;
  spec.families.clear();
  for (const auto& family_name : families.empty() ? settings.families : families) {
    connectors::FamilySpec family;
    family.name = family_name;
    family.ttl = settings.ttl;
    family.max_versions = 1;
    family.bloom_filter = settings.bloom_filter;
    family.compression = settings.compression;
    spec.families.push_back(std::move(family));
  }
  spec.split_keys = split_keys;
  return spec;
}

namespace {

std::string family_list(const connectors::TableSpec& spec) {
  std::string names;
  for (const auto& family : spec.families) names += (names.empty() ? "'" : ", '") + family.name + "'";
  return names;
}

}  // namespace

BootstrapReport bootstrap_tables(connectors::HBaseAdmin& admin, const std::vector<TablePlan>& plans,
                                 const TableSettings& settings) {
  // Several plans (routes) may share a table: it gets the union of their families, in first-seen order.
  std::vector<TablePlan> tables;
  for (const auto& plan : plans) {
    const auto same =
        std::find_if(tables.begin(), tables.end(), [&](const TablePlan& t) { return t.table == plan.table; });
    const auto& families = plan.families.empty() ? settings.families : plan.families;
    if (same == tables.end()) {
      tables.push_back({plan.table, families, plan.split_keys});
      continue;
    }
    for (const auto& family : families) {
      if (std::find(same->families.begin(), same->families.end(), family) == same->families.end()) {
        same->families.push_back(family);
      }
    }
  }
  BootstrapReport report;
  for (const auto& plan : tables) {
    const auto spec = table_spec(settings, plan.table, plan.split_keys, plan.families);
    const auto result = admin.ensure_table(spec);
    switch (result.outcome) {
      case connectors::EnsureOutcome::created:
        report.lines.push_back("created " + plan.table + " (" + (spec.families.size() == 1 ? "family " : "families ") +
                               family_list(spec) + ", TTL " + std::to_string(settings.ttl.count()) + " s, " +
                               std::to_string(spec.split_keys.size() + 1) + " regions)");
        break;
      case connectors::EnsureOutcome::already_matches:
        report.lines.push_back("ok " + plan.table + " (exists and matches)");
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

void require_tables(connectors::HBaseAdmin& admin, const std::vector<TablePlan>& plans, const std::string& remedy) {
  for (const auto& plan : plans) {
    const auto name = connectors::TableName::parse(plan.table);
    if (!admin.table_exists(name.ns, name.table)) {
      throw std::runtime_error("HBase table " + plan.table + " does not exist: " + remedy);
    }
  }
}

}  // namespace hbingest::ingest
