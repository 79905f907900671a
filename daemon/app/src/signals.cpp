#include "hbingest/app/signals.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <csignal>
#include <cstdlib>

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

SignalWatcher::SignalWatcher(std::function<void()> on_reload) : on_reload_(std::move(on_reload)) {
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
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
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
    spdlog::info("stop signal received: draining (send it again to exit immediately)");
  }
}

}  // namespace hbingest::app
