#pragma once
// SIGTERM/SIGINT/SIGHUP handling on a dedicated thread (sigwait), so no work runs in a signal handler.
// First TERM/INT: request a graceful stop. Second: exit at once (status 130) — safe because only
// offsets of stored events are ever committed, so nothing unstored is lost, only re-read.
// HUP: calls on_reload (log level reload).
//
// Construct it before starting any other thread: the signal mask is inherited.

#include <atomic>
#include <functional>
#include <thread>

namespace hbingest::app {

class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void()> on_reload);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  const std::atomic<bool>& stop_requested() const { return stop_; }

 private:
  void run();
  std::function<void()> on_reload_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> exiting_{false};
  std::thread thread_;
};

}  // namespace hbingest::app
