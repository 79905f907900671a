// Logins against the stack's real MIT KDC: a good keytab, a stale one, a principal the KDC does not
// know, a clock an hour ahead (libfaketime), and 1-minute tickets renewed while another thread
// reads the cache the whole time.

#include <gtest/gtest.h>
#include <krb5.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "hbingest/kerberos/keytab_login.h"
#include "hbingest/kerberos/ticket_keeper.h"
#include "kerberos_stack.h"

extern char** environ;

namespace hbingest::kerberos {
namespace {

using namespace std::chrono_literals;
using testing::KerberosStack;

std::string unique_ccache(const std::string& what) {
  return "MEMORY:hbingest-it-" + what + "-" + std::to_string(::getpid());
}

// The TGT's end time in `ccache` as another krb5 context sees it, or nullopt when the cache holds
// no client principal or no TGT: what GSSAPI in another thread would find.
std::optional<std::chrono::system_clock::time_point> tgt_end(const std::string& ccache, const std::string& realm) {
  krb5_context context = nullptr;
  if (krb5_init_context(&context) != 0) return std::nullopt;
  std::optional<std::chrono::system_clock::time_point> end;
  krb5_ccache cache = nullptr;
  krb5_principal client = nullptr;
  krb5_principal tgs = nullptr;
  if (krb5_cc_resolve(context, ccache.c_str(), &cache) == 0 && krb5_cc_get_principal(context, cache, &client) == 0 &&
      krb5_build_principal(context, &tgs, static_cast<unsigned int>(realm.size()), realm.c_str(), "krbtgt",
                           realm.c_str(), nullptr) == 0) {
    krb5_creds match{};
    match.client = client;
    match.server = tgs;
    krb5_creds found{};
    if (krb5_cc_retrieve_cred(context, cache, 0, &match, &found) == 0) {
      end =
          std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<std::uint32_t>(found.times.endtime)));
      krb5_free_cred_contents(context, &found);
    }
  }
  if (tgs != nullptr) krb5_free_principal(context, tgs);
  if (client != nullptr) krb5_free_principal(context, client);
  if (cache != nullptr) krb5_cc_close(context, cache);
  krb5_free_context(context);
  return end;
}

class KeytabLoginIntegration : public ::testing::Test {
 protected:
  void SetUp() override { HBINGEST_REQUIRE_KERBEROS_STACK(stack_); }

  LoginOptions options(const std::string& principal, const std::string& keytab, const std::string& link = "hbase") {
    return {link, stack_.principal(principal), stack_.keytab(keytab), unique_ccache(principal)};
  }

  LoginError login_error(const LoginOptions& opts) {
    KeytabLogin login(opts);
    try {
      login.login();
    } catch (const LoginError& e) {
      return e;
    }
    ADD_FAILURE() << "logged in as " << opts.principal << " with " << opts.keytab;
    return LoginError(LoginFailure::other, 0, "");
  }

  KerberosStack stack_;
};

TEST_F(KeytabLoginIntegration, LogsInFromTheKeytabIntoTheNamedCache) {
  const auto opts = options("hbingest", "hbingest.keytab");
  KeytabLogin login(opts);
  const auto before = std::chrono::system_clock::now();
  const Ticket ticket = login.login();
  EXPECT_EQ(ticket.client, stack_.principal("hbingest"));
  EXPECT_GT(ticket.expires, before + 1h) << "the realm's max_life is a day";
  const auto end = tgt_end(opts.ccache, stack_.realm);
  ASSERT_TRUE(end) << opts.ccache << " holds no TGT another context can find";
  EXPECT_EQ(*end, ticket.expires);
  // Never the user's default cache.
  EXPECT_NE(tgt_end("MEMORY:", stack_.realm), ticket.expires);
}

TEST_F(KeytabLoginIntegration, StaleKeytabIsAWrongKeytab) {
  const LoginError e = login_error(options("hbingest-stale", "stale.keytab", "kafka"));
  EXPECT_EQ(e.failure(), LoginFailure::wrong_keytab) << e.what();
  const std::string text = e.what();
  EXPECT_NE(text.find("kerberos login for kafka failed"), std::string::npos) << text;
  EXPECT_NE(text.find("principal hbingest-stale@" + stack_.realm), std::string::npos) << text;
  EXPECT_NE(text.find("stale.keytab"), std::string::npos) << text;
  EXPECT_NE(text.find("wrong keytab"), std::string::npos) << text;
  EXPECT_NE(text.find("[krb5: "), std::string::npos) << text;
  std::printf("stale keytab: %s\n", text.c_str());
}

TEST_F(KeytabLoginIntegration, PrincipalTheKdcDoesNotKnow) {
  // A keytab with a key of a principal the realm never had (written here, no KDC involved).
  const auto path =
      std::filesystem::temp_directory_path() / ("hbingest-ghost-" + std::to_string(::getpid()) + ".keytab");
  std::filesystem::remove(path);
  {
    krb5_context context = nullptr;
    ASSERT_EQ(krb5_init_context(&context), 0);
    krb5_keytab keytab = nullptr;
    ASSERT_EQ(krb5_kt_resolve(context, ("WRFILE:" + path.string()).c_str(), &keytab), 0);
    krb5_keytab_entry entry{};
    ASSERT_EQ(krb5_parse_name(context, stack_.principal("ghost").c_str(), &entry.principal), 0);
    entry.vno = 1;
    std::array<krb5_octet, 32> key{};
    entry.key.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    entry.key.length = key.size();
    entry.key.contents = key.data();
    ASSERT_EQ(krb5_kt_add_entry(context, keytab, &entry), 0);
    krb5_free_principal(context, entry.principal);
    krb5_kt_close(context, keytab);
    krb5_free_context(context);
  }
  LoginOptions opts{"hbase", stack_.principal("ghost"), path.string(), unique_ccache("ghost")};
  const LoginError e = login_error(opts);
  std::filesystem::remove(path);
  EXPECT_EQ(e.failure(), LoginFailure::unknown_principal) << e.what();
  EXPECT_NE(std::string(e.what()).find("does not know this principal"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("ghost@" + stack_.realm), std::string::npos) << e.what();
}

TEST_F(KeytabLoginIntegration, PrincipalMissingFromTheKeytabNamesWhatItHolds) {
  const LoginError e = login_error(options("hbingest-short", "hbingest.keytab"));
  EXPECT_EQ(e.failure(), LoginFailure::principal_not_in_keytab) << e.what();
  EXPECT_NE(std::string(e.what()).find("the keytab holds hbingest@" + stack_.realm), std::string::npos) << e.what();
}

// Run by ClockAnHourAheadIsClockSkew in a child process under libfaketime.
TEST_F(KeytabLoginIntegration, SkewChild) {
  if (std::getenv("HBINGEST_KRB_SKEW_CHILD") == nullptr) GTEST_SKIP() << "runs as ClockAnHourAheadIsClockSkew's child";
  const LoginError e = login_error(options("hbingest", "hbingest.keytab"));
  std::printf("SKEW-RESULT %s|%s\n", std::string(to_string(e.failure())).c_str(), e.what());
}

TEST_F(KeytabLoginIntegration, ClockAnHourAheadIsClockSkew) {
  const char* faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
  if (!std::filesystem::exists(faketime)) GTEST_SKIP() << faketime << " missing (apt-get install libfaketime)";
  const std::string out_path =
      (std::filesystem::temp_directory_path() / ("hbingest-skew-" + std::to_string(::getpid()) + ".out")).string();
  const std::string command = "HBINGEST_KRB_SKEW_CHILD=1 LD_PRELOAD=" + std::string(faketime) + " FAKETIME=+1h /proc/" +
                              std::to_string(::getpid()) + "/exe --gtest_filter=KeytabLoginIntegration.SkewChild > " +
                              out_path + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  std::string output;
  if (FILE* f = std::fopen(out_path.c_str(), "r")) {
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) output.append(buffer.data(), n);
    std::fclose(f);
  }
  std::filesystem::remove(out_path);
  const auto at = output.find("SKEW-RESULT ");
  ASSERT_NE(at, std::string::npos) << output;
  const std::string result = output.substr(at, output.find('\n', at) - at);
  EXPECT_NE(result.find("SKEW-RESULT clock_skew|"), std::string::npos) << result;
  EXPECT_NE(result.find("local clock may be off"), std::string::npos) << result;
  EXPECT_NE(result.find("this host's clock reads"), std::string::npos) << result;
  std::printf("%s\n", result.c_str());
}

// 1-minute tickets (hbingest-short's maxlife) renewed by the keeper, at a tenth of their lifetime
// (its floor of 5 s) to keep the test short, while another thread reads the cache as GSSAPI would:
// it must find a TGT every time, never an empty cache between two renewals.
TEST_F(KeytabLoginIntegration, ShortTicketsRenewedWhileReadersNeverSeeAnEmptyCache) {
  const auto opts = options("hbingest-short", "short.keytab");
  KeeperSchedule schedule;
  schedule.refresh_fraction = 0.1;
  std::promise<void> renewed_thrice;
  std::vector<std::chrono::system_clock::time_point> ends;
  std::mutex ends_mutex;
  TicketKeeper::Hooks hooks;
  hooks.on_attempt = [&](const KeeperStatus& status) {
    std::lock_guard lock(ends_mutex);
    if (status.valid_until) ends.push_back(*status.valid_until);
    if (status.logins == 4) renewed_thrice.set_value();
  };
  auto login = std::make_shared<KeytabLogin>(opts);
  std::atomic<bool> reading{true};
  std::atomic<long> reads{0};
  std::atomic<long> empty_reads{0};
  {
    TicketKeeper keeper(
        opts.link, opts.principal, [login] { return login->login(); }, schedule, hooks);
    const auto first_end = keeper.status().valid_until;
    ASSERT_TRUE(first_end);
    EXPECT_LE(*first_end - std::chrono::system_clock::now(), 61s) << "hbingest-short's tickets live a minute";
    std::thread reader([&] {
      while (reading) {
        ++reads;
        if (!tgt_end(opts.ccache, stack_.realm)) ++empty_reads;
      }
    });
    renewed_thrice.get_future().wait();
    reading = false;
    reader.join();
    const KeeperStatus status = keeper.status();
    EXPECT_EQ(status.failures, 0U) << status.last_error;
    EXPECT_EQ(tgt_end(opts.ccache, stack_.realm), status.valid_until) << "the cache holds the newest ticket";
  }
  EXPECT_EQ(empty_reads.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 100);
  std::lock_guard lock(ends_mutex);
  ASSERT_EQ(ends.size(), 3U);
  EXPECT_LT(ends[0], ends[1]);
  EXPECT_LT(ends[1], ends[2]);
  std::printf("3 renewals of 1-minute tickets, %ld cache reads in between, none empty\n", reads.load());
}

}  // namespace
}  // namespace hbingest::kerberos
