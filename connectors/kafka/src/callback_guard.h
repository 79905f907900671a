#pragma once
// No exception may unwind through librdkafka's C frames. Every callback we hand to librdkafka runs
// its body through guarded(): the first exception is kept and rethrown on the caller's thread by
// the next rethrow_pending() (from poll/flush); later ones are logged. Not thread-safe: librdkafka
// serves callbacks on the thread that polls.

#include <spdlog/spdlog.h>
#include <exception>
#include <string>
#include <utility>

namespace hbingest::connectors {

class CallbackGuard {
 public:
  explicit CallbackGuard(std::string who) : who_(std::move(who)) {}

  template <typename F>
  void guarded(const char* where, F&& f) noexcept {
    try {
      std::forward<F>(f)();
    } catch (const std::exception& e) {
      spdlog::error("{}: {}: {}", who_, where, e.what());
      if (!first_) first_ = std::current_exception();
    } catch (...) {
      spdlog::error("{}: {}: unknown exception", who_, where);
      if (!first_) first_ = std::current_exception();
    }
  }

  void rethrow_pending() {
    if (first_) std::rethrow_exception(std::exchange(first_, nullptr));
  }

 private:
  std::string who_;
  std::exception_ptr first_;
};

}  // namespace hbingest::connectors
