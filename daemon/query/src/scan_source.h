#pragma once
// Where the merge takes each planned range's rows from. Internal to hbingest_query.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "hbingest/connectors/scanner.h"

namespace hbingest::query::detail {

using Clock = std::chrono::steady_clock;
// Opens one scanner; the engine's version counts it and reports it to the observer.
using ScannerOpener = std::function<std::unique_ptr<connectors::RowScanner>(const connectors::ScanRequest&)>;

// Used by one merging thread.
class ScanSource {
 public:
  virtual ~ScanSource() = default;
  // The next chunk of range `i`; an empty chunk means the range is exhausted. Blocks until one is
  // ready. Throws QueryTimeout past the deadline, or the first scan error of the query.
  virtual std::vector<connectors::ScannedRow> next(std::size_t i) = 0;
  // The merge is well into range `i`'s current chunk and will likely need the next one: a source
  // that fetches on demand may start fetching it now.
  virtual void prefetch(std::size_t i) = 0;
  // The merge needs nothing more from range `i`: its scanner may be closed.
  virtual void finished(std::size_t i) = 0;
  // How many scanners were opened so far.
  virtual std::size_t opened() const = 0;
};

}  // namespace hbingest::query::detail
