// The stack's KDC stopped and started again (stack/hbstack stop|start kdc): a login says the KDC is
// unreachable and names it; a keeper whose renewal falls in the outage keeps the old ticket, backs
// off, and logs in again once the KDC is back. Runs alone (RUN_SERIAL): the KDC is the stack's.

#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <mutex>
#include <string>

#include "hbingest/kerberos/keytab_login.h"
#include "hbingest/kerberos/ticket_keeper.h"
#include "kerberos_stack.h"

namespace hbingest::kerberos {
namespace {

using namespace std::chrono_literals;

void hbstack(const std::string& verb) {
  const std::string command =
      "HBSTACK_KERBEROS=1 " + std::string(HBINGEST_SOURCE_DIR) + "/stack/hbstack " + verb + " kdc >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

class KdcOutage : public ::testing::Test {
 protected:
  void SetUp() override { HBINGEST_REQUIRE_KERBEROS_STACK(stack_); }
  void TearDown() override {
    if (stopped_) hbstack("start");
  }
  testing::KerberosStack stack_;
  bool stopped_ = false;
};

TEST_F(KdcOutage, UnreachableKdcIsNamedAndTheKeeperRecoversWhenItIsBack) {
  const LoginOptions opts{"kafka", stack_.principal("hbingest-short"), stack_.keytab("short.keytab"),
                          "MEMORY:hbingest-it-outage-" + std::to_string(::getpid())};
  KeeperSchedule schedule;
  schedule.refresh_fraction = 0.1;  // the first renewal 6 s after the login (1-minute tickets)
  schedule.initial_backoff = 200ms;
  schedule.max_backoff = 1s;

  std::mutex mutex;
  int failures_seen = 0;
  bool recovered = false;
  std::promise<void> failing;
  std::promise<void> back;
  TicketKeeper::Hooks hooks;
  hooks.on_attempt = [&](const KeeperStatus& status) {
    std::lock_guard lock(mutex);
    if (status.failing_since && ++failures_seen == 3) failing.set_value();
    if (!status.failing_since && failures_seen >= 3 && !recovered) {
      recovered = true;
      back.set_value();
    }
  };
  auto login = std::make_shared<KeytabLogin>(opts);
  TicketKeeper keeper(
      opts.link, opts.principal, [login] { return login->login(); }, schedule, hooks);
  const auto first_ticket_end = keeper.status().valid_until;

  hbstack("stop");
  stopped_ = true;
  {
    KeytabLogin direct(opts);
    try {
      direct.login();
      FAIL() << "logged in with the KDC stopped";
    } catch (const LoginError& e) {
      EXPECT_EQ(e.failure(), LoginFailure::kdc_unreachable) << e.what();
      const std::string text = e.what();
      EXPECT_NE(text.find("kerberos login for kafka failed"), std::string::npos) << text;
      EXPECT_NE(text.find("no KDC of the realm answered"), std::string::npos) << text;
      EXPECT_NE(text.find("127.0.0.1:" + stack_.kdc_port), std::string::npos) << "names the KDC: " << text;
      std::printf("KDC stopped: %s\n", text.c_str());
    }
  }
  failing.get_future().wait();
  {
    const KeeperStatus status = keeper.status();
    EXPECT_TRUE(status.failing_since);
    EXPECT_EQ(status.valid_until, first_ticket_end) << "the old ticket stays while renewals fail";
    EXPECT_NE(status.last_error.find("no KDC of the realm answered"), std::string::npos) << status.last_error;
  }

  hbstack("start");
  stopped_ = false;
  back.get_future().wait();
  const KeeperStatus status = keeper.status();
  EXPECT_FALSE(status.failing_since);
  EXPECT_TRUE(status.last_error.empty());
  EXPECT_GE(status.failures, 3U);
  ASSERT_TRUE(status.valid_until);
  EXPECT_GT(*status.valid_until, *first_ticket_end);
  std::printf("recovered after %llu failed attempts\n", static_cast<unsigned long long>(status.failures));
}

}  // namespace
}  // namespace hbingest::kerberos
