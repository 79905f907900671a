#include "hbingest/kerberos/ticket_keeper.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <utility>

namespace hbingest::kerberos {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

std::string utc_text(system_clock::time_point time) {
  const std::time_t t = system_clock::to_time_t(time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string seconds_text(system_clock::duration d) { return std::to_string(duration_cast<seconds>(d).count()) + " s"; }

}  // namespace

std::optional<std::string> not_ready_reason(const KeeperStatus& status, system_clock::time_point now, seconds margin) {
  if (!status.failing_since) return std::nullopt;
  const std::string failing = "Kerberos login for " + status.link + " (" + status.principal + ") failing for " +
                              seconds_text(now - *status.failing_since);
  if (!status.valid_until || *status.valid_until <= now) {
    return failing + ", the ticket has expired" +
           (status.valid_until ? " (at " + utc_text(*status.valid_until) + ")" : std::string()) + ": " +
           status.last_error;
  }
  if (*status.valid_until - now <= margin) {
    return failing + ", the ticket expires in " + seconds_text(*status.valid_until - now) + ": " + status.last_error;
  }
  return std::nullopt;
}

milliseconds refresh_delay(const Ticket& ticket, system_clock::time_point now, const KeeperSchedule& schedule) {
  const auto lifetime = ticket.expires - ticket.start;
  const auto refresh_at =
      ticket.start + duration_cast<system_clock::duration>(lifetime * std::clamp(schedule.refresh_fraction, 0.0, 1.0));
  return std::max(schedule.min_refresh_delay, duration_cast<milliseconds>(refresh_at - now));
}

milliseconds backoff_delay(int attempt, double jitter, const KeeperSchedule& schedule) {
  const int shift = std::clamp(attempt, 0, 30);
  // Doubling in floating point cannot overflow; the cap bounds the result.
  const double step = std::min(static_cast<double>(schedule.max_backoff.count()),
                               static_cast<double>(schedule.initial_backoff.count()) * std::ldexp(1.0, shift));
  return milliseconds(static_cast<milliseconds::rep>(step * std::clamp(jitter, 0.5, 1.0)));
}

TicketKeeper::TicketKeeper(LoginOptions options, KeeperSchedule schedule)
    : link_(options.link),
      principal_(options.principal),
      keytab_login_(std::make_unique<KeytabLogin>(std::move(options))),
      login_([this] { return keytab_login_->login(); }),
      schedule_(schedule) {
  status_.link = link_;
  status_.principal = principal_;
  const Ticket ticket = login_();  // throws: a start error names the cause
  status_.valid_until = ticket.expires;
  status_.logins = 1;
  next_delay_ = refresh_delay(ticket, hooks_.now(), schedule_);
  spdlog::info("kerberos: {} logged in as {} from {} into {}, ticket valid until {}; next login in {} s", link_,
               ticket.client, keytab_login_->options().keytab, keytab_login_->options().ccache,
               utc_text(ticket.expires), duration_cast<seconds>(next_delay_).count());
  thread_ = std::thread([this] { run(); });
}

TicketKeeper::TicketKeeper(std::string link, std::string principal, LoginFunction login, KeeperSchedule schedule,
                           Hooks hooks)
    : link_(std::move(link)),
      principal_(std::move(principal)),
      login_(std::move(login)),
      schedule_(schedule),
      hooks_(std::move(hooks)) {
  status_.link = link_;
  status_.principal = principal_;
  const Ticket ticket = login_();
  status_.valid_until = ticket.expires;
  status_.logins = 1;
  next_delay_ = refresh_delay(ticket, hooks_.now(), schedule_);
  thread_ = std::thread([this] { run(); });
}

TicketKeeper::~TicketKeeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

KeeperStatus TicketKeeper::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

bool TicketKeeper::wait(milliseconds delay) {
  if (hooks_.wait) {
    if (!hooks_.wait(delay)) return false;
    std::lock_guard lock(mutex_);
    return !stopping_;
  }
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, delay, [this] { return stopping_; });
}

void TicketKeeper::run() {
  milliseconds delay = next_delay_;
  int attempt = 0;
  while (wait(delay)) {
    KeeperStatus snapshot;
    try {
      const Ticket ticket = login_();
      const auto now = hooks_.now();
      delay = refresh_delay(ticket, now, schedule_);
      {
        std::lock_guard lock(mutex_);
        if (status_.failing_since) {
          spdlog::info("kerberos: {} login as {} works again after {} failed attempt(s) in {}", link_, principal_,
                       attempt, seconds_text(now - *status_.failing_since));
        }
        status_.valid_until = ticket.expires;
        status_.failing_since.reset();
        status_.last_error.clear();
        ++status_.logins;
        snapshot = status_;
      }
      attempt = 0;
      spdlog::info("kerberos: {} ticket for {} renewed, valid until {}; next login in {} s", link_, ticket.client,
                   utc_text(ticket.expires), duration_cast<seconds>(delay).count());
    } catch (const std::exception& e) {
      const auto now = hooks_.now();
      const double jitter = hooks_.jitter ? hooks_.jitter() : std::uniform_real_distribution<double>(0.5, 1.0)(rng_);
      delay = backoff_delay(attempt++, jitter, schedule_);
      std::optional<system_clock::time_point> valid_until;
      {
        std::lock_guard lock(mutex_);
        if (!status_.failing_since) status_.failing_since = now;
        status_.last_error = e.what();
        ++status_.failures;
        valid_until = status_.valid_until;
        snapshot = status_;
      }
      // Once the ticket is gone the link cannot authenticate at all: the next try after the KDC is
      // back is all that holds its partitions, so the wait is kept short.
      if (!valid_until || *valid_until <= now) delay = std::min(delay, schedule_.expired_max_backoff);
      const std::string ticket_state =
          !valid_until         ? "no ticket"
          : *valid_until > now ? "the current ticket is valid until " + utc_text(*valid_until)
                               : "the ticket expired at " + utc_text(*valid_until) + ": the link cannot authenticate";
      spdlog::error("{}; retrying in {} ms ({})", e.what(), delay.count(), ticket_state);
    }
    if (hooks_.on_attempt) {
      try {
        hooks_.on_attempt(snapshot);
      } catch (...) {
        // A metrics hook must never end the keeper.
      }
    }
  }
}

}  // namespace hbingest::kerberos
