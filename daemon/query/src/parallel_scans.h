#pragma once
// ParallelScans: n ranges fetched by a bounded set of worker threads into bounded queues.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "scan_source.h"

namespace hbingest::query::detail {

// Workers pick the ready range with the emptiest queue (lowest index on ties), open its scanner on
// first use and fetch one chunk at a time, so min(n, concurrency) threads serve any number of
// ranges and no range runs more than `prefetch_chunks` ahead of the merge. Only ranges with index
// below (first range not yet finished) + `window` are started: key-order merges pass the
// concurrency so that ranges far ahead are never opened when a limit ends the query early.
//
// On demand (`on_demand`), a range's next chunk is fetched only once the merge asks for it, through
// prefetch(i) or next(i): a time-ordered merge with a limit needs a few rows from each range, and
// chunks fetched ahead that the answer never uses cost the servers reading them (measured in bench/:
// on a loaded machine that made parallel slower than serial).
//
// The destructor cancels (interrupting the calls in progress: RowScanner::cancel), joins every
// worker, then closes the scanners still open. The deadline therefore bounds the query thread too,
// not only the merge's wait: no worker stays in a call to a gateway that does not answer.
class ParallelScans final : public ScanSource {
 public:
  ParallelScans(std::vector<connectors::ScanRequest> requests, ScannerOpener opener, int concurrency,
                int prefetch_chunks, std::size_t window, bool on_demand, Clock::time_point deadline);
  ~ParallelScans() override;
  ParallelScans(const ParallelScans&) = delete;
  ParallelScans& operator=(const ParallelScans&) = delete;

  std::vector<connectors::ScannedRow> next(std::size_t i) override;
  void prefetch(std::size_t i) override;
  void finished(std::size_t i) override;
  std::size_t opened() const override;

 private:
  struct Range {
    connectors::ScanRequest request;
    // Set and reset by the worker holding in_flight, under the mutex (cancel_locked reads it).
    std::unique_ptr<connectors::RowScanner> scanner;
    std::deque<std::vector<connectors::ScannedRow>> queue;
    bool in_flight = false;
    bool wanted = true;  // on demand: the merge asked for the next chunk (the first one always)
    bool exhausted = false;
    bool finished = false;  // the merge is done with it
  };

  void work();
  // Index of the range a worker should fetch next, or ranges_.size() when none is ready.
  std::size_t pick_locked() const;
  bool all_done_locked() const;
  void cancel_locked();
  // On demand: the merge waits for or asks for range i's next chunk.
  void want_locked(Range& range);

  ScannerOpener opener_;
  std::size_t prefetch_;
  std::size_t window_;
  bool on_demand_;
  Clock::time_point deadline_;

  mutable std::mutex mutex_;
  std::condition_variable work_cv_;   // workers: a range became ready, or stop
  std::condition_variable ready_cv_;  // merge: a chunk arrived, a range ended, or an error
  std::vector<Range> ranges_;
  std::size_t first_unfinished_ = 0;
  std::size_t opened_ = 0;
  bool cancelled_ = false;
  std::exception_ptr error_;

  // Last member: the workers stop and are joined (in the destructor) before anything above goes.
  std::vector<std::thread> workers_;
};

}  // namespace hbingest::query::detail
