#pragma once
// Creates (or checks) every table the routes write to: namespace, family with TTL, VERSIONS 1,
// bloom filter, and split keys at the salt bucket boundaries of the route's key spec; and the
// dead-letter topic. hbingest::app passes in the admin clients it built from the config.

#include <chrono>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/kafka_producer.h"

namespace hbingest::ingest {

// What every route table gets (the config's `table` and the families its routes write to). Every
// family is made alike: the table's TTL, VERSIONS 1, the bloom filter and the compression.
struct TableSettings {
  std::vector<std::string> families{"d"};  // at least one; a table's own list in TablePlan overrides it
  std::chrono::seconds ttl{600};
  std::string bloom_filter = "ROW";
  std::string compression = "NONE";
};

// One table to create or check: its name ("ns:table"), the families its routes write to (empty:
// TableSettings::families) and the region boundaries of its key spec.
struct TablePlan {
  std::string table;
  std::vector<std::string> families;
  std::vector<std::string> split_keys;
};

struct BootstrapReport {
  std::vector<std::string> lines;  // one per table: created / ok / differs: ...
  bool differences = false;        // an existing table does not match the settings
};

// The table spec for one route table ("ns:table"): families (each with TTL, versions, bloom filter,
// compression), splits. `families` empty: settings.families.
connectors::TableSpec table_spec(const TableSettings& settings, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys,
                                 const std::vector<std::string>& families = {});

// Creates or checks each table of `plans` (a table named twice is done once, with the families of
// both plans).
BootstrapReport bootstrap_tables(connectors::HBaseAdmin& admin, const std::vector<TablePlan>& plans,
                                 const TableSettings& settings);

// Creates the dead-letter topic when missing, with max.message.bytes large enough for the largest
// original (10 MiB; the broker default of 1 MB would refuse a 5 MB letter). Returns what it did.
std::string ensure_dead_letter_topic(connectors::KafkaProducer& admin, const std::string& topic);

// Throws naming the first route table that does not exist, followed by `remedy`. The daemon calls
// it before consuming: a table missing at start is a deployment mistake better refused than
// retried (HBase 2.6.1's gateway answers each put into it with a retriable TIOError, forever).
// While the daemon runs, TableWatch keeps watching.
void require_tables(connectors::HBaseAdmin& admin, const std::vector<TablePlan>& plans, const std::string& remedy);

}  // namespace hbingest::ingest
