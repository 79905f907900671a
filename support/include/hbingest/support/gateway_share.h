#pragma once
// GatewayShare: the gateways' capacity, shared between the daemon's queries and its writers.
//
// While ingest catches up a backlog, the writers keep every gateway and region server as busy as
// they can; a query's scans then wait behind putMultiple batches of hundreds of rows for CPU,
// gateway threads and region-server handlers alike. So queries register while they run (a
// Registration, released by its destructor) and the writers ask how many batches they may have in
// flight: as many as they want while no query runs, at most `writer_batches_while_querying` while
// any does, and never fewer than one, so ingest slows down for queries but never stops.
//
// The writers wait for a lower limit to rise again: a listener (subscribe()) is called whenever the
// last running query ends.
//
// Thread safety: every method may be called from any thread. running_queries() and writer_batches()
// take no lock, so a writer may ask under a lock of its own that its listener takes. A listener runs
// on the thread whose query ended, with the share's listener lock held: it must be quick (notify a
// condition variable) and must not subscribe or unsubscribe. A Subscription's destructor waits for
// a call in progress, so the listener's captures may be destroyed right after it.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace hbingest::support {

class GatewayShare {
 public:
  // Throws std::invalid_argument when writer_batches_while_querying < 1.
  explicit GatewayShare(int writer_batches_while_querying);
  GatewayShare(const GatewayShare&) = delete;
  GatewayShare& operator=(const GatewayShare&) = delete;

  // A running query, counted until destroyed. Movable; a moved-from one counts nothing.
  class Registration {
   public:
    Registration() = default;
    ~Registration();
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;

   private:
    friend class GatewayShare;
    explicit Registration(GatewayShare* share) : share_(share) {}
    GatewayShare* share_ = nullptr;
  };

  // Calls `on_raised` (see above) until destroyed. Movable; a moved-from one calls nothing.
  class Subscription {
   public:
    Subscription() = default;
    ~Subscription();
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;

   private:
    friend class GatewayShare;
    Subscription(GatewayShare* share, std::uint64_t id) : share_(share), id_(id) {}
    void reset() noexcept;
    GatewayShare* share_ = nullptr;
    std::uint64_t id_ = 0;
  };

  [[nodiscard]] Registration register_query();
  [[nodiscard]] Subscription subscribe(std::function<void()> on_raised);

  int running_queries() const;
  // Of the `wanted` batches the writers would have in flight, how many they may have now: all of
  // them while no query runs, at most writer_batches_while_querying while one does; at least 1.
  int writer_batches(int wanted) const;

 private:
  void leave() noexcept;

  const int while_querying_;
  std::atomic<int> running_{0};
  std::mutex mutex_;  // guards next_id_ and listeners_; held while listeners run
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::function<void()>> listeners_;
};

}  // namespace hbingest::support
