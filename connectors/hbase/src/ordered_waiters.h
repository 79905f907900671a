#pragma once
// OrderedWaiters: callers waiting for a resource that a mutex of the caller's guards, let through
// one at a time in order of priority (lower first), then of arrival.
//
// The scanner pool serves the calls of all running queries from a few connections. Woken in any
// order, the queries' calls interleave and every query advances at the pace of all of them together
// (each query as slow as the whole backlog); served oldest query first, each query takes about its
// own time plus that of the queries before it, which is what bounds the tail of their latencies.
//
// Not thread-safe on its own: every call is made with the caller's mutex held (`lock`).

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace hbingest::connectors::detail {

class OrderedWaiters {
 public:
  // Returns once the caller is first in line and `ready()` holds (at once when nobody waits and it
  // holds). `ready` is evaluated under `lock`.
  template <class Ready>
  void wait(std::unique_lock<std::mutex>& lock, std::uint64_t priority, Ready ready) {
    if (waiting_.empty() && ready()) return;
    std::condition_variable cv;
    const Key key{priority, next_arrival_++};
    waiting_.emplace(key, &cv);
    struct Leave {
      OrderedWaiters& waiters;
      const Key& key;
      ~Leave() {
        waiters.waiting_.erase(key);
        waiters.notify_locked();  // the next in line may go on too, or is now first
      }
    } leave{*this, key};
    cv.wait(lock, [&] { return waiting_.begin()->first == key && ready(); });
  }

  // What `ready` depends on changed: the first in line looks again. Call it with the lock held,
  // so that the waiter it wakes cannot be gone meanwhile.
  void notify_locked() {
    if (!waiting_.empty()) waiting_.begin()->second->notify_one();
  }

  std::size_t waiting() const { return waiting_.size(); }

 private:
  using Key = std::pair<std::uint64_t, std::uint64_t>;  // priority, arrival
  std::map<Key, std::condition_variable*> waiting_;
  std::uint64_t next_arrival_ = 0;
};

}  // namespace hbingest::connectors::detail
