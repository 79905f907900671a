#include "hbingest/app/signals.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <mutex>
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

// Runs on_reload for the signal thread. Its state is shared with the thread, so that a reload stuck
// in a system call at shutdown can be detached and left to the process's exit without a dangling
// reference.
class SignalWatcher::ReloadThread {
 public:
  explicit ReloadThread(std::function<void()> on_reload)
      : state_(std::make_shared<State>(std::move(on_reload))), thread_([state = state_] { run(*state); }) {}

  ~ReloadThread() {
    bool busy = false;
    {
      std::lock_guard lock(state_->mutex);
      state_->exiting = true;
      busy = state_->running;
    }
    state_->wake.notify_all();
    if (!busy) {
      thread_.join();  // idle: it sees `exiting` before taking another request
      return;
    }
    spdlog::warn("a config reload is still running at shutdown (blocked reading a file?): not waiting for it");
    thread_.detach();
  }
  ReloadThread(const ReloadThread&) = delete;
  ReloadThread& operator=(const ReloadThread&) = delete;

  // From the signal thread: never waits for a reload.
  void request() {
    bool busy = false;
    {
      std::lock_guard lock(state_->mutex);
      busy = state_->running;
      state_->pending = true;
    }
    state_->wake.notify_all();
    if (busy) spdlog::warn("SIGHUP: the previous reload is still running; reloading again once it is done");
  }

 private:
  struct State {
    explicit State(std::function<void()> f) : on_reload(std::move(f)) {}
    std::function<void()> on_reload;
    std::mutex mutex;
    std::condition_variable wake;
    bool pending = false;  // a HUP not yet served
    bool running = false;  // on_reload is being called
    bool exiting = false;
  };

  static void run(State& state) {
    std::unique_lock lock(state.mutex);
    for (;;) {
      state.wake.wait(lock, [&] { return state.pending || state.exiting; });
      if (state.exiting) return;
      state.pending = false;
      state.running = true;
      lock.unlock();
      try {
        if (state.on_reload) state.on_reload();
      } catch (const std::exception& e) {
        spdlog::error("reload on SIGHUP failed: {}", e.what());
      }
      lock.lock();
      state.running = false;
    }
  }

  std::shared_ptr<State> state_;
  std::thread thread_;
};

SignalWatcher::SignalWatcher(std::function<void()> on_reload, std::chrono::milliseconds stop_limit)
    : stop_limit_(stop_limit) {
  const sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // After the mask: the reload thread must not take the signals either.
  reloads_ = std::make_unique<ReloadThread>(std::move(on_reload));
  thread_ = std::thread([this] { run(); });
}

SignalWatcher::~SignalWatcher() {
  exiting_ = true;
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
  reloads_.reset();  // after the signal thread, its only caller
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
      reloads_->request();
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
