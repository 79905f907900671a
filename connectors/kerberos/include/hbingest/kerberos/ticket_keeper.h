#pragma once
// Keeps one link's ticket valid: logs in once when made (a failure there is a start error), then on
// its own thread logs in again before the ticket expires, and while that fails (a KDC down at
// renewal time) tries again with capped exponential backoff and jitter until it succeeds. The
// previous ticket stays in the cache meanwhile, so the link keeps working until it expires;
// status() says how long that is, for /readyz and the metrics.
//
// Re-acquiring (a new AS exchange with the keytab's key) rather than renewing (a TGS exchange with
// the old ticket) works for principals without a renewable lifetime and after a ticket expired.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "hbingest/kerberos/keytab_login.h"

namespace hbingest::kerberos {

struct KeeperStatus {
  std::string link;
  std::string principal;
  std::optional<std::chrono::system_clock::time_point> valid_until;    // the cached ticket's end
  std::optional<std::chrono::system_clock::time_point> failing_since;  // first failure of the current run of them
  std::string last_error;                                              // of the current run of failures
  std::uint64_t failures = 0;                                          // failed logins since start, in total
  std::uint64_t logins = 0;                                            // successful ones, the first included
};

// Why readiness should fail, or nullopt: only while logins are failing AND the ticket has expired or
// expires within `margin` (before that the link still works on the old ticket).
std::optional<std::string> not_ready_reason(const KeeperStatus& status, std::chrono::system_clock::time_point now,
                                            std::chrono::seconds margin);

struct KeeperSchedule {
  // Logging in again at this fraction of the ticket's lifetime leaves a third of it for failures.
  double refresh_fraction = 2.0 / 3.0;
  // Never sooner than this after a success (a ticket of a few seconds must not spin the KDC).
  std::chrono::milliseconds min_refresh_delay{std::chrono::seconds(5)};
  std::chrono::milliseconds initial_backoff{std::chrono::seconds(1)};
  // Also how long a link may wait after the KDC is back: kept short, one AS request per step costs the
  // KDC nothing.
  std::chrono::milliseconds max_backoff{std::chrono::seconds(15)};
  // The cap once the ticket has expired (nothing authenticates until the next try succeeds).
  std::chrono::milliseconds expired_max_backoff{std::chrono::seconds(5)};
};

// When to log in again after `ticket` was obtained at `now`. Pure.
std::chrono::milliseconds refresh_delay(const Ticket& ticket, std::chrono::system_clock::time_point now,
                                        const KeeperSchedule& schedule);
// The wait before retry number `attempt` (0 after the first failure): min(max, initial * 2^attempt)
// scaled by `jitter` in [0.5, 1]: never all at once, never much sooner than the exponential step. Pure.
std::chrono::milliseconds backoff_delay(int attempt, double jitter, const KeeperSchedule& schedule);

class TicketKeeper {
 public:
  using LoginFunction = std::function<Ticket()>;  // throws (LoginError) on failure
  // Waits `delay`, or less when the keeper stops; returns false when it is stopping. Tests inject one
  // that returns at once (and records the delay); the default waits on the keeper's own condition.
  using WaitFunction = std::function<bool(std::chrono::milliseconds delay)>;

  struct Hooks {
    std::function<std::chrono::system_clock::time_point()> now = std::chrono::system_clock::now;
    WaitFunction wait;               // default: the keeper's condition variable
    std::function<double()> jitter;  // in [0.5, 1]; default: uniform from a random seed
    // After each login attempt, on the keeper's thread (metrics); must not throw.
    std::function<void(const KeeperStatus&)> on_attempt;
  };

  // Logs in from the keytab into options.ccache: throws LoginError when the first login fails.
  TicketKeeper(LoginOptions options, KeeperSchedule schedule = {});
  // The same with any login function (tests); `link` and `principal` name it in status().
  TicketKeeper(std::string link, std::string principal, LoginFunction login, KeeperSchedule schedule, Hooks hooks);
  // Stops and joins the thread (a login in progress finishes first: krb5's own timeouts bound it).
  ~TicketKeeper();
  TicketKeeper(const TicketKeeper&) = delete;
  TicketKeeper& operator=(const TicketKeeper&) = delete;

  // Any thread.
  KeeperStatus status() const;
  const std::string& link() const noexcept { return link_; }

 private:
  void run();
  bool wait(std::chrono::milliseconds delay);

  std::string link_;
  std::string principal_;
  std::unique_ptr<KeytabLogin> keytab_login_;  // null with an injected login function
  LoginFunction login_;
  KeeperSchedule schedule_;
  Hooks hooks_;
  std::mt19937_64 rng_{std::random_device{}()};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  KeeperStatus status_;
  std::chrono::milliseconds next_delay_{0};
  std::thread thread_;  // last: starts once everything it reads exists
};

}  // namespace hbingest::kerberos
