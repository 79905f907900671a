#pragma once
// SerialScans: the same ranges, fetched by the merging thread itself, one scan call at a time.

#include <cstddef>
#include <memory>
#include <vector>

#include "scan_source.h"

namespace hbingest::query::detail {

// The baseline for bench/: what the query costs without concurrency. The deadline is checked
// before each call (a call in progress is bounded by the connector's read timeout).
class SerialScans final : public ScanSource {
 public:
  SerialScans(std::vector<connectors::ScanRequest> requests, ScannerOpener opener, Clock::time_point deadline);

  std::vector<connectors::ScannedRow> next(std::size_t i) override;
  void prefetch(std::size_t) override {}  // nothing runs ahead of the merge
  void finished(std::size_t i) override;
  std::size_t opened() const override { return opened_; }

 private:
  struct Range {
    connectors::ScanRequest request;
    std::unique_ptr<connectors::RowScanner> scanner;
    bool exhausted = false;
  };

  ScannerOpener opener_;
  Clock::time_point deadline_;
  std::vector<Range> ranges_;
  std::size_t opened_ = 0;
};

}  // namespace hbingest::query::detail
