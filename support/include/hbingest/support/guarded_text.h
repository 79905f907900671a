#pragma once
// A string one thread writes and others read (a reason shown by /readyz): copies under a mutex.

#include <mutex>
#include <string>

namespace hbingest::support {

class GuardedText {
 public:
  void set(std::string text) {
    const std::lock_guard lock(mutex_);
    text_ = std::move(text);
  }
  std::string get() const {
    const std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  mutable std::mutex mutex_;
  std::string text_;
};

}  // namespace hbingest::support
