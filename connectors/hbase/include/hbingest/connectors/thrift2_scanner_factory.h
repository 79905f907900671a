#pragma once
// ScannerFactory over the HBase Thrift2 gateway: each chunk is one stateless getScannerResults
// call (a range that fits in one chunk costs one round trip) on a bounded pool of connections. A
// scanner borrows a connection per call, so any number of scanners may be in progress while at
// most `max_connections` calls run. The factory must outlive its scanners.

#include <atomic>
#include <memory>

#include "hbingest/connectors/scanner.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::connectors {

class Thrift2ScannerFactory : public ScannerFactory {
 public:
  // Scan calls (round trips to the gateway) made so far — for tests and metrics.
  virtual std::size_t calls() const = 0;
};

std::unique_ptr<Thrift2ScannerFactory> make_thrift2_scanner_factory(const Thrift2Options& options, int max_connections);

}  // namespace hbingest::connectors
