#include "hbingest/app/signals.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <optional>

namespace hbingest::app {

namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);  // used only to wake the watcher for shutdown
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher(std::function<void()> on_reload, std::chrono::milliseconds stop_limit)
    : on_reload_(std::move(on_reload)), stop_limit_(stop_limit) {
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { run(); });
}

SignalWatcher::~SignalWatcher() {
  exiting_ = true;
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

void SignalWatcher::run() {
  const sigset_t set = watched_signals();
  std::optional<std::chrono::steady_clock::time_point> hard_stop;  // set by the first stop signal
  for (;;) {
    int signal = 0;
    if (!hard_stop) {
      if (sigwait(&set, &signal) != 0) continue;
    } else {
      const auto left =
          std::max(std::chrono::steady_clock::duration::zero(), *hard_stop - std::chrono::steady_clock::now());
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(left);
      const timespec wait{
          static_cast<time_t>(seconds.count()),
          static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(left - seconds).count())};
      signal = sigtimedwait(&set, nullptr, &wait);
      if (signal < 0 && errno == EAGAIN && !exiting_) {
        spdlog::critical(
            "shutdown still running {} ms after the stop signal (shutdown_deadline + {} s): exiting now; events not "
            "yet "
            "stored stay uncommitted and will be re-read",
            stop_limit_.count(), kStopGrace.count());
        spdlog::default_logger()->flush();
        std::_Exit(1);
      }
      if (signal < 0) continue;  // EINTR, or exiting with the timer just run out
    }
    if (exiting_) return;
    if (signal == SIGHUP) {
      try {
        if (on_reload_) on_reload_();
      } catch (const std::exception& e) {
        spdlog::error("reload on SIGHUP failed: {}", e.what());
      }
      continue;
    }
    if (signal != SIGTERM && signal != SIGINT) continue;
    if (stop_.exchange(true)) {
      spdlog::warn("second stop signal: exiting now; events not yet stored stay uncommitted and will be re-read");
      spdlog::default_logger()->flush();
      std::_Exit(130);
    }
    hard_stop = std::chrono::steady_clock::now() + stop_limit_;
    spdlog::info("stop signal received: draining (send it again to exit immediately)");
  }
}

}  // namespace hbingest::app
