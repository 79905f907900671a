#include "hbingest/kerberos/ticket_keeper.h"

#include <gtest/gtest.h>

#include <deque>
#include <future>
#include <mutex>
#include <variant>
#include <vector>

namespace hbingest::kerberos {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

const system_clock::time_point kT0 = system_clock::time_point(std::chrono::seconds(1'800'000'000));

TEST(RefreshDelayTest, TwoThirdsOfTheLifetimeFromTheTicketsStart) {
  const KeeperSchedule schedule;
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 + 60s}, kT0, schedule), 40s);
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 + 24h}, kT0, schedule), 16h);
  // The login itself took a while: counted from the ticket's start, not from now.
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 + 60s}, kT0 + 10s, schedule), 30s);
}

TEST(RefreshDelayTest, NeverSoonerThanTheFloor) {
  const KeeperSchedule schedule;
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 + 3s}, kT0, schedule), 5s);
  // A ticket already past its refresh point (a clock step, a slow KDC) waits the floor, not zero.
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 + 60s}, kT0 + 59s, schedule), 5s);
  // A ticket ending before it starts (hostile KDC reply) does not make a negative wait.
  EXPECT_EQ(refresh_delay({"c", kT0, kT0 - 60s}, kT0, schedule), 5s);
}

TEST(BackoffDelayTest, DoublesUpToTheCapWithJitterFromHalfToWhole) {
  const KeeperSchedule schedule;
  EXPECT_EQ(backoff_delay(0, 1.0, schedule), 1s);
  EXPECT_EQ(backoff_delay(1, 1.0, schedule), 2s);
  EXPECT_EQ(backoff_delay(3, 1.0, schedule), 8s);
  EXPECT_EQ(backoff_delay(4, 1.0, schedule), 15s);
  EXPECT_EQ(backoff_delay(3, 0.5, schedule), 4s);
  EXPECT_EQ(backoff_delay(1'000'000, 1.0, schedule), 15s);
  EXPECT_EQ(backoff_delay(-5, 1.0, schedule), 1s);
  // A jitter source out of range is clamped, never a zero or a doubled wait.
  EXPECT_EQ(backoff_delay(0, 0.0, schedule), 500ms);
  EXPECT_EQ(backoff_delay(0, 7.0, schedule), 1s);
}

TEST(NotReadyReasonTest, OnlyWhileFailingAndTheTicketIsGoneOrAlmostGone) {
  KeeperStatus status{"hbase", "svc@R", kT0 + 600s, std::nullopt, "", 0, 1};
  EXPECT_FALSE(not_ready_reason(status, kT0, 60s));
  status.failing_since = kT0 - 30s;
  status.last_error = "kerberos login for hbase failed (...): no KDC of the realm answered";
  EXPECT_FALSE(not_ready_reason(status, kT0, 60s)) << "the old ticket still works for 10 minutes";
  const auto soon = not_ready_reason(status, kT0 + 590s, 60s);
  ASSERT_TRUE(soon);
  EXPECT_NE(soon->find("expires in 10 s"), std::string::npos) << *soon;
  EXPECT_NE(soon->find("no KDC of the realm answered"), std::string::npos) << *soon;
  const auto gone = not_ready_reason(status, kT0 + 700s, 60s);
  ASSERT_TRUE(gone);
  EXPECT_NE(gone->find("has expired"), std::string::npos) << *gone;
  EXPECT_NE(gone->find("hbase (svc@R)"), std::string::npos) << *gone;
}

// A scripted KDC and a simulated clock: each wait advances the clock by what the keeper asked for.
struct Script {
  std::mutex mutex;
  system_clock::time_point now = kT0;
  std::deque<std::variant<std::chrono::seconds, std::string>> outcomes;  // lifetime of a ticket, or an error
  std::vector<std::chrono::milliseconds> waits;
  std::vector<KeeperStatus> attempts;
  std::size_t max_waits = 0;
  std::promise<void> finished;

  Ticket login() {
    std::lock_guard lock(mutex);
    if (outcomes.empty()) throw std::runtime_error("script exhausted");
    auto next = outcomes.front();
    outcomes.pop_front();
    if (auto* error = std::get_if<std::string>(&next)) {
      throw LoginError(LoginFailure::kdc_unreachable, -1765328228, *error);
    }
    return Ticket{"svc@R", now, now + std::get<std::chrono::seconds>(next)};
  }

  TicketKeeper::Hooks hooks() {
    TicketKeeper::Hooks hooks;
    hooks.now = [this] {
      std::lock_guard lock(mutex);
      return now;
    };
    hooks.wait = [this](std::chrono::milliseconds delay) {
      std::lock_guard lock(mutex);
      if (waits.size() == max_waits) {
        finished.set_value();
        return false;
      }
      waits.push_back(delay);
      now += delay;
      return true;
    };
    hooks.jitter = [] { return 1.0; };
    hooks.on_attempt = [this](const KeeperStatus& status) {
      std::lock_guard lock(mutex);
      attempts.push_back(status);
    };
    return hooks;
  }
};

TEST(TicketKeeperTest, FirstLoginFailureIsAStartError) {
  Script script;
  script.outcomes = {std::string("kerberos login for kafka failed: wrong keytab")};
  try {
    TicketKeeper keeper(
        "kafka", "svc@R", [&] { return script.login(); }, {}, script.hooks());
    FAIL() << "constructed without a ticket";
  } catch (const LoginError& e) {
    EXPECT_EQ(std::string(e.what()), "kerberos login for kafka failed: wrong keytab");
  }
}

TEST(TicketKeeperTest, RenewsAtTwoThirdsAndBacksOffWhileTheKdcIsDown) {
  Script script;
  script.outcomes = {60s, 60s, std::string("kdc down 1"), std::string("kdc down 2"), std::string("kdc down 3"), 60s};
  script.max_waits = 5;
  auto finished = script.finished.get_future();
  TicketKeeper keeper(
      "hbase", "svc@R", [&] { return script.login(); }, {}, script.hooks());
  finished.wait();  // the keeper's thread has made its five attempts and is leaving its loop

  const std::vector<std::chrono::milliseconds> expected = {40s, 40s, 1s, 2s, 4s};
  EXPECT_EQ(script.waits, expected);
  ASSERT_EQ(script.attempts.size(), 5U);
  // The first failure comes at 80 s (the renewal at 40 s gave a ticket until 100 s): the keeper
  // fails on a still valid ticket, and recovers at 87 s.
  EXPECT_EQ(script.attempts[1].failing_since, kT0 + 80s);
  EXPECT_EQ(script.attempts[1].last_error, "kdc down 1");
  EXPECT_EQ(script.attempts[1].valid_until, kT0 + 100s);
  EXPECT_EQ(script.attempts[2].failing_since, kT0 + 80s) << "the first failure of the run, not the last";
  EXPECT_EQ(script.attempts[2].last_error, "kdc down 2");
  const KeeperStatus status = keeper.status();
  EXPECT_EQ(status.failures, 3U);
  EXPECT_EQ(status.logins, 3U);
  EXPECT_FALSE(status.failing_since);
  EXPECT_TRUE(status.last_error.empty());
  EXPECT_EQ(status.valid_until, kT0 + 87s + 60s);
}

TEST(TicketKeeperTest, KeepsTryingPastTheExpiryAndSaysSo) {
  Script script;
  script.outcomes = {60s};
  for (int i = 0; i < 12; ++i) script.outcomes.emplace_back(std::string("kdc down"));
  script.max_waits = 12;
  auto finished = script.finished.get_future();
  TicketKeeper keeper(
      "kafka", "svc@R", [&] { return script.login(); }, {}, script.hooks());
  finished.wait();
  // 40 s, then 1, 2, 4, 8 and the cap of 15 s while the ticket is valid; once it has expired, 5 s.
  EXPECT_EQ(script.waits[4], 8s);
  EXPECT_EQ(script.waits[5], 15s);
  EXPECT_EQ(script.waits.back(), 5s);
  const KeeperStatus status = keeper.status();
  EXPECT_EQ(status.failures, 12U);
  ASSERT_TRUE(status.valid_until);
  const auto reason = not_ready_reason(status, script.now, 60s);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("has expired"), std::string::npos) << *reason;
}

TEST(TicketKeeperTest, StopsWhileWaitingForTheNextRenewal) {
  // The real wait, a renewal an hour away: destruction must not wait for it.
  auto keeper = std::make_unique<TicketKeeper>(
      "hbase", "svc@R",
      [] {
        return Ticket{"svc@R", system_clock::now(), system_clock::now() + 2h};
      },
      KeeperSchedule{}, TicketKeeper::Hooks{});
  EXPECT_EQ(keeper->status().logins, 1U);
  keeper.reset();
}

}  // namespace
}  // namespace hbingest::kerberos
