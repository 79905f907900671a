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

// What every route table gets (the config's `table` and `decode.family`).
struct TableSettings {
  std::string family = "d";
  std::chrono::seconds ttl{600};
  std::string bloom_filter = "ROW";
  std::string compression = "NONE";
};

// A table the routes write: its families and the split keys of its key spec.
struct RouteTable {
  std::string table;  // "ns:table"
  std::vector<std::string> families;
  std::vector<std::string> split_keys;
};

struct BootstrapReport {
  std::vector<std::string> lines;  // one per table: created / ok / differs: ...
  bool differences = false;        // an existing table does not match the settings
};

// The table spec for one route table ("ns:table"): family, TTL, versions, bloom filter, splits.
connectors::TableSpec table_spec(const TableSettings& settings, const std::string& qualified_table,
                                 const std::vector<std::string>& split_keys);

// Creates or checks each table once (several routes may share one).
BootstrapReport bootstrap_tables(connectors::HBaseAdmin& admin, const std::vector<RouteTable>& tables,
                                 const TableSettings& settings);

// Creates the dead-letter topic when missing, with max.message.bytes large enough for the largest
// original (10 MiB; the broker default of 1 MB would refuse a 5 MB letter). Returns what it did.
std::string ensure_dead_letter_topic(connectors::KafkaProducer& admin, const std::string& topic);

// Throws naming the first route table that does not exist, followed by `remedy`. The daemon calls
// it before consuming: a table missing at start is a deployment mistake better refused than
// retried (HBase 2.6.1's gateway answers each put into it with a retriable TIOError, forever).
// While the daemon runs, TableWatch keeps watching.
void require_tables(connectors::HBaseAdmin& admin, const std::vector<RouteTable>& tables, const std::string& remedy);

}  // namespace hbingest::ingest
