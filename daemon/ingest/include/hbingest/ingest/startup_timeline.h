#pragma once
// How long a start took to its first stored row, and where it spent it: the time to join the
// consumer group (first partitions assigned), to the first message, to the first row HBase
// acknowledged, all from the start of `hbingest run`. Logged once at info ("first row stored after
// X ms (joined group after Y ms, first message after Z ms)"; bench/ parses that line), the steps
// before the group join at debug level.
// Thread safety: one thread calls the event methods (the pipeline's); mark() from the thread that
// starts the daemon, before the pipeline runs.

#include <chrono>
#include <optional>
#include <string_view>

namespace hbingest::ingest {

class StartupTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StartupTimeline(Clock::time_point start = Clock::now()) : start_(start) {}

  // A startup step ended (tables checked, consumer subscribed...): logged at debug.
  void mark(std::string_view step) const;
  // The first non-empty assignment, the first polled message, the first stored row; each counts
  // once, later calls cost a comparison.
  void joined() {
    if (!joined_) joined_ = since_start();
  }
  void first_message() {
    if (!first_message_) first_message_ = since_start();
  }
  void rows_stored();

  std::chrono::milliseconds since_start() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_);
  }

 private:
  Clock::time_point start_;
  std::optional<std::chrono::milliseconds> joined_;
  std::optional<std::chrono::milliseconds> first_message_;
  bool first_row_logged_ = false;
};

}  // namespace hbingest::ingest
