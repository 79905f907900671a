#pragma once
// ScannerFactory over the HBase Thrift2 gateway: openScanner + getScannerRows + closeScanner on a
// bounded pool of connections. Each open RowScanner holds one connection until it is closed, so at
// most `max_connections` scans are open at once; open() blocks for a free connection.

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

std::unique_ptr<Thrift2ScannerFactory> make_thrift2_scanner_factory(const Thrift2Options& options,
                                                                    int max_connections);

}  // namespace hbingest::connectors
