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

// Throws naming the first route table that does not exist. The daemon calls it before consuming:
// HBase's Thrift2 gateway acknowledges puts into a missing table without storing them.
void require_tables(const config::Config& config, const Router& router);

}  // namespace hbingest::daemon
