#pragma once
// Creates (or checks) every table the routes write to: namespace, family with TTL, VERSIONS 1,
// bloom filter, and split keys at the salt bucket boundaries of the route's key spec.

#include <string>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/daemon/router.h"

namespace hbingest::daemon {

struct BootstrapReport {
  std::vector<std::string> lines;  // one per table: created / ok / differs: ...
  bool differences = false;        // an existing table does not match the config
};

BootstrapReport bootstrap_tables(const config::Config& config, const Router& router);

// Creates the dead-letter topic when missing, with max.message.bytes large enough for the largest
// original (10 MiB; the broker default of 1 MB would refuse a 5 MB letter). Returns what it did.
std::string ensure_dead_letter_topic(const config::Config& config);

// Throws naming the first route table that does not exist. The daemon calls it before consuming:
// HBase's Thrift2 gateway acknowledges puts into a missing table without storing them.
void require_tables(const config::Config& config, const Router& router);

}  // namespace hbingest::daemon
