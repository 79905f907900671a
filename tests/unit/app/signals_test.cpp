// The shutdown backstop of SignalWatcher, in child processes (death tests): a real SIGTERM, a
// shutdown that does or does not end in time.

#include "hbingest/app/signals.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
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

}  // namespace
}  // namespace hbingest::app
