#pragma once
// ChunkChannel: hands rendered pieces of a response from the thread running a query to the thread
// writing them to the client, holding at most `max_buffered` bytes in between: a slow client slows
// the query down instead of growing memory. Thread-safe; one producer, one consumer.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace hbingest::server::detail {

class ChunkChannel {
 public:
  explicit ChunkChannel(std::size_t max_buffered) : max_buffered_(max_buffered) {}

  // Producer: queues `chunk`, waiting while the buffer is full. False once cancel() was called.
  bool push(std::string chunk) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return cancelled_ || buffered_ < max_buffered_; });
    if (cancelled_) return false;
    buffered_ += chunk.size();
    chunks_.push_back(std::move(chunk));
    changed_.notify_all();
    return true;
  }

  // Producer: nothing more will come.
  void close() {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }

  // Consumer: waits until `bytes` are buffered or the producer has closed. True when closed.
  bool wait_for(std::size_t bytes) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || buffered_ >= bytes; });
    return closed_;
  }

  // Consumer: the next chunk, or nullopt once closed and empty.
  std::optional<std::string> pop() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closed_ || !chunks_.empty(); });
    if (chunks_.empty()) return std::nullopt;
    std::string chunk = std::move(chunks_.front());
    chunks_.pop_front();
    buffered_ -= chunk.size();
    changed_.notify_all();
    return chunk;
  }

  // Consumer: gone; the producer's next push() fails.
  void cancel() {
    const std::lock_guard lock(mutex_);
    cancelled_ = true;
    changed_.notify_all();
  }

 private:
  const std::size_t max_buffered_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> chunks_;
  std::size_t buffered_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace hbingest::server::detail
