#include "counted_scanner.h"

#include <utility>

namespace hbingest::query::detail {

CountedScanner::CountedScanner(std::unique_ptr<connectors::RowScanner> inner, std::atomic<int>& open_count,
                               QueryObserver* observer) noexcept
    : inner_(std::move(inner)), open_count_(open_count), observer_(observer) {
  ++open_count_;
  if (observer_) observer_->on_scanner_open();
}

CountedScanner::~CountedScanner() { close(); }

std::vector<connectors::ScannedRow> CountedScanner::next_chunk() {
  if (!inner_) return {};
  return inner_->next_chunk();
}

bool CountedScanner::exhausted() const { return !inner_ || inner_->exhausted(); }

void CountedScanner::cancel() noexcept {
  if (inner_) inner_->cancel();
}

void CountedScanner::close() noexcept {
  if (!inner_) return;
  inner_->close();
  inner_.reset();
  --open_count_;
  if (observer_) observer_->on_scanner_close();
}

}  // namespace hbingest::query::detail
