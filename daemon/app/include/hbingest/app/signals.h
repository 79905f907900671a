#pragma once
// SIGTERM/SIGINT/SIGHUP handling on a dedicated thread (sigwait), so no work runs in a signal handler.
// First TERM/INT: request a graceful stop. Second: exit at once (status 130) — safe because only
// offsets of stored events are ever committed, so nothing unstored is lost, only re-read.
// Backstop: if the process is still alive `stop_limit` after the first stop signal (the shutdown
// budget plus kStopGrace), it exits at once (status 1) the same way, before the service
// manager's SIGKILL, and says so in the log. The budget's steps keep it from firing (shutdown_budget.h);
// it catches a step that does not keep its own timeout (a library call, a stuck writer).
// HUP: calls on_reload (log level reload) on a reload thread of its own, never on the signal
// thread: a reload that blocks (a config on a hung mount) must not keep a later SIGTERM from being
// handled, nor the backstop from being armed. HUPs that arrive during a reload are folded into one
// more reload after it. A reload still running when the watcher is destroyed is left behind (its
// thread detached, owning what it uses) rather than waited for.
//
// Construct it before starting any other thread: the signal mask is inherited.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace hbingest::app {

class SignalWatcher {
 public:
  // Between the shutdown budget's end and the backstop: writers finish a call already on the wire
  // (bounded by hbase.read_timeout's share of it), the HTTP server stops.
  static constexpr std::chrono::seconds kStopGrace{5};

  // stop_limit: see above; the commands pass their shutdown budget + kStopGrace.
  SignalWatcher(std::function<void()> on_reload, std::chrono::milliseconds stop_limit);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  const std::atomic<bool>& stop_requested() const { return stop_; }

 private:
  class ReloadThread;

  void run();
  std::unique_ptr<ReloadThread> reloads_;
  std::chrono::milliseconds stop_limit_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> exiting_{false};
  std::thread thread_;
};

}  // namespace hbingest::app
