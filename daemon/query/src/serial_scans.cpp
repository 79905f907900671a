#include "serial_scans.h"

#include <string>
#include <utility>

#include "hbingest/query/query.h"

namespace hbingest::query::detail {

SerialScans::SerialScans(std::vector<connectors::ScanRequest> requests, ScannerOpener opener,
                         Clock::time_point deadline)
    : opener_(std::move(opener)), deadline_(deadline) {
  ranges_.reserve(requests.size());
  for (auto& request : requests) ranges_.emplace_back().request = std::move(request);
}

std::vector<connectors::ScannedRow> SerialScans::next(std::size_t i) {
  Range& range = ranges_.at(i);
  if (range.exhausted) return {};
  if (Clock::now() >= deadline_) {
    throw QueryTimeout("query deadline passed before call on scan " + std::to_string(i) + " of " +
                       std::to_string(ranges_.size()) + " (table " + range.request.table + ", serial)");
  }
  if (!range.scanner) {
    range.scanner = opener_(range.request);
    ++opened_;
  }
  auto chunk = range.scanner->next_chunk();
  if (chunk.empty() || range.scanner->exhausted()) {
    range.exhausted = true;
    range.scanner.reset();
  }
  return chunk;
}

void SerialScans::finished(std::size_t i) { ranges_.at(i).scanner.reset(); }

}  // namespace hbingest::query::detail
