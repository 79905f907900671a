#pragma once
// CountedScanner: keeps the engine's open-scanner count and the observer in step with the real
// scanners, whatever path closes them.

#include <atomic>
#include <memory>
#include <vector>

#include "hbingest/connectors/scanner.h"
#include "hbingest/query/query.h"

namespace hbingest::query::detail {

// Same thread-safety as the wrapped scanner: one thread drives it; cancel() may come from another
// while that thread is inside next_chunk() (never while it closes the scanner).
class CountedScanner final : public connectors::RowScanner {
 public:
  CountedScanner(std::unique_ptr<connectors::RowScanner> inner, std::atomic<int>& open_count,
                 QueryObserver* observer) noexcept;
  ~CountedScanner() override;
  CountedScanner(const CountedScanner&) = delete;
  CountedScanner& operator=(const CountedScanner&) = delete;

  std::vector<connectors::ScannedRow> next_chunk() override;
  bool exhausted() const override;
  void close() noexcept override;
  void cancel() noexcept override;

 private:
  std::unique_ptr<connectors::RowScanner> inner_;
  std::atomic<int>& open_count_;
  QueryObserver* observer_;
};

}  // namespace hbingest::query::detail
