#pragma once
// An in-memory ScannerFactory for the query tests: one sorted map per table, honouring start/stop,
// reversed, columns and chunk_rows, with hooks to inject errors and delays and counters of the
// scanners it handed out.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hbingest/connectors/scanner.h"

namespace hbingest::query::testing {

class FakeScannerFactory final : public connectors::ScannerFactory {
 public:
  // Hooks run on the thread that opens / fetches. They may throw (e.g. HBaseError) or sleep.
  // Set them before running queries.
  std::function<void(const connectors::ScanRequest&)> on_open;
  // `call` counts next_chunk calls of that scanner from 0.
  std::function<void(const connectors::ScanRequest&, int call)> on_next;

  void put(const std::string& table, std::string row, std::vector<connectors::ScannedCell> cells);

  std::unique_ptr<connectors::RowScanner> open(const connectors::ScanRequest& request) override;

  int open_now() const { return open_now_.load(); }
  int opened_total() const { return opened_total_.load(); }
  // next_chunk calls (round trips, for a real server) and rows returned by them, over all scanners.
  int calls_total() const { return calls_total_.load(); }
  int rows_served() const { return rows_served_.load(); }
  // The most bytes (connectors::held_bytes) one next_chunk call returned.
  std::size_t largest_chunk_bytes() const;
  // start_row of every scanner opened, in opening order.
  std::vector<std::string> opened_starts() const;

 private:
  friend class FakeScanner;
  void record_chunk(const std::vector<connectors::ScannedRow>& chunk);
  using Table = std::map<std::string, std::vector<connectors::ScannedCell>>;

  std::map<std::string, Table> tables_;  // filled before queries; read-only while they run
  std::atomic<int> open_now_{0};
  std::atomic<int> opened_total_{0};
  std::atomic<int> calls_total_{0};
  std::atomic<int> rows_served_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> opened_starts_;
  std::size_t largest_chunk_bytes_ = 0;
};

}  // namespace hbingest::query::testing
