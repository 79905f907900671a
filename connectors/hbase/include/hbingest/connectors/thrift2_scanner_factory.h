#pragma once
// ScannerFactory over the HBase Thrift2 gateway: openScanner + getScannerRows + closeScanner on a
// bounded pool of connections. A scanner borrows a connection per call (to the endpoint it was
// opened on), so any number of scanners may be open while at most `max_connections` calls run.
// The factory must outlive its scanners.

#include <atomic>
#include <memory>

#include "hbingest/connectors/scanner.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::connectors {

class Thrift2ScannerFactory : public ScannerFactory {
 public:
  // Scanners currently open on the server (opened and not yet closed) — for tests and metrics.
  virtual std::size_t open_scanners() const = 0;
};

std::unique_ptr<Thrift2ScannerFactory> make_thrift2_scanner_factory(const Thrift2Options& options, int max_connections);

}  // namespace hbingest::connectors
