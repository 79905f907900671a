// The shutdown backstop of SignalWatcher, in child processes (death tests): a real SIGTERM, a
// shutdown that does or does not end in time; a SIGHUP reload that never returns.

#include "hbingest/app/signals.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <future>
#include <thread>

namespace hbingest::app {
namespace {

using namespace std::chrono_literals;

void log_to_stderr() { spdlog::set_default_logger(spdlog::stderr_logger_st("signals_test")); }

TEST(SignalWatcherDeathTest, AShutdownThatOutlivesItsLimitEndsTheProcessWithStatus1) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        log_to_stderr();
        SignalWatcher watcher(nullptr, 300ms);
        ::kill(::getpid(), SIGTERM);
        std::this_thread::sleep_for(20s);  // a drain that never ends
        std::exit(0);
      },
      ::testing::ExitedWithCode(1), "shutdown still running 300 ms after the stop signal");
}

TEST(SignalWatcherDeathTest, AShutdownWithinItsLimitEndsNormally) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        log_to_stderr();
        {
          SignalWatcher watcher(nullptr, 2s);
          ::kill(::getpid(), SIGTERM);
          const auto deadline = std::chrono::steady_clock::now() + 5s;
          while (!watcher.stop_requested() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(10ms);
          }
          if (!watcher.stop_requested()) std::exit(3);
        }                                 // the shutdown ends here, well within 2 s
        std::this_thread::sleep_for(3s);  // past the limit: the backstop must be gone with the watcher
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "stop signal received");
}

// Waits up to 5 s for `done`.
template <class Predicate>
bool eventually(Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(SignalWatcherDeathTest, AReloadThatNeverReturnsHoldsUpNeitherTheStopNorTheShutdown) {
  // The reload of a config on a hung mount (or, before the loader refused them, a FIFO nobody
  // writes to) used to block the signal thread: the SIGTERM after it was never handled.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        log_to_stderr();
        std::atomic<bool> reloading{false};
        std::promise<void> never;
        {
          SignalWatcher watcher(
              [&, blocked = never.get_future().share()] {
                reloading = true;
                blocked.wait();
              },
              2s);
          ::kill(::getpid(), SIGHUP);
          if (!eventually([&] { return reloading.load(); })) std::exit(3);
          ::kill(::getpid(), SIGHUP);  // folded into one more reload after the stuck one
          ::kill(::getpid(), SIGTERM);
          if (!eventually([&] { return watcher.stop_requested().load(); })) std::exit(4);
        }  // the shutdown ends here, with the reload still stuck
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "stop signal received(.|\n)*a config reload is still running at shutdown");
}

}  // namespace
}  // namespace hbingest::app
