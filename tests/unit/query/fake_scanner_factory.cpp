#include "fake_scanner_factory.h"

#include <algorithm>
#include <stdexcept>

namespace hbingest::query::testing {

namespace {

bool column_selected(const std::vector<std::string>& columns, const connectors::ScannedCell& cell) {
  if (columns.empty()) return true;
  return std::any_of(columns.begin(), columns.end(),
                     [&](const std::string& c) { return c == cell.family || c == cell.family + ":" + cell.qualifier; });
}

}  // namespace

// The rows of the range are copied at open time, like a server-side snapshot.
class FakeScanner final : public connectors::RowScanner {
 public:
  FakeScanner(FakeScannerFactory& factory, connectors::ScanRequest request, std::vector<connectors::ScannedRow> rows)
      : factory_(factory), request_(std::move(request)), rows_(std::move(rows)), chunk_rows_(request_.chunk_rows) {}
  ~FakeScanner() override { close(); }

  std::vector<connectors::ScannedRow> next_chunk() override {
    if (closed_) throw std::logic_error("fake scanner: next_chunk after close");
    // A round trip spent to learn what the last one already said.
    if (exhausted_) throw std::logic_error("fake scanner: next_chunk after a short chunk");
    if (factory_.on_next) factory_.on_next(request_, calls_);
    ++calls_;
    ++factory_.calls_total_;
    std::vector<connectors::ScannedRow> chunk;
    while (pos_ < rows_.size() && chunk.size() < static_cast<std::size_t>(chunk_rows_)) {
      chunk.push_back(rows_[pos_++]);
      largest_row_ = std::max(largest_row_, connectors::held_bytes(chunk.back()));
    }
    factory_.rows_served_ += static_cast<int>(chunk.size());
    // Like the Thrift2 scanner: it knows the range is over only when a chunk comes back short.
    if (chunk.size() < static_cast<std::size_t>(chunk_rows_)) exhausted_ = true;
    factory_.record_chunk(chunk);
    chunk_rows_ = connectors::next_chunk_rows(request_, chunk_rows_, largest_row_);
    return chunk;
  }

  bool exhausted() const override { return exhausted_; }

  void close() noexcept override {
    if (closed_) return;
    closed_ = true;
    --factory_.open_now_;
  }

 private:
  FakeScannerFactory& factory_;
  connectors::ScanRequest request_;
  std::vector<connectors::ScannedRow> rows_;
  std::size_t pos_ = 0;
  int chunk_rows_;
  std::size_t largest_row_ = 0;
  int calls_ = 0;
  bool exhausted_ = false;
  bool closed_ = false;
};

void FakeScannerFactory::put(const std::string& table, std::string row, std::vector<connectors::ScannedCell> cells) {
  tables_[table][std::move(row)] = std::move(cells);
}

std::unique_ptr<connectors::RowScanner> FakeScannerFactory::open(const connectors::ScanRequest& request) {
  if (on_open) on_open(request);
  if (request.chunk_rows < 1) throw std::invalid_argument("fake scanner: chunk_rows < 1");
  std::vector<connectors::ScannedRow> rows;
  if (const auto table = tables_.find(request.table); table != tables_.end()) {
    auto it = table->second.lower_bound(request.start_row);
    const auto end = request.stop_row.empty() ? table->second.end() : table->second.lower_bound(request.stop_row);
    for (; it != end && (request.stop_row.empty() || it->first < request.stop_row); ++it) {
      connectors::ScannedRow row{.row = it->first, .cells = {}};
      for (const auto& cell : it->second) {
        if (column_selected(request.columns, cell)) row.cells.push_back(cell);
      }
      rows.push_back(std::move(row));
    }
  }
  if (request.reversed) std::reverse(rows.begin(), rows.end());
  {
    const std::lock_guard lock(mutex_);
    opened_starts_.push_back(request.start_row);
  }
  ++open_now_;
  ++opened_total_;
  return std::make_unique<FakeScanner>(*this, request, std::move(rows));
}

void FakeScannerFactory::record_chunk(const std::vector<connectors::ScannedRow>& chunk) {
  std::size_t bytes = 0;
  for (const auto& row : chunk) bytes += connectors::held_bytes(row);
  const std::lock_guard lock(mutex_);
  largest_chunk_bytes_ = std::max(largest_chunk_bytes_, bytes);
}

std::size_t FakeScannerFactory::largest_chunk_bytes() const {
  const std::lock_guard lock(mutex_);
  return largest_chunk_bytes_;
}

std::vector<std::string> FakeScannerFactory::opened_starts() const {
  const std::lock_guard lock(mutex_);
  return opened_starts_;
}

}  // namespace hbingest::query::testing
