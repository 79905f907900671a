#include <gtest/gtest.h>
#include <krb5.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hbingest/kerberos/keytab_login.h"

namespace hbingest::kerberos {
namespace {

TEST(LoginFailureTest, ClassifiesWhatTheKdcAndTheLibrarySay) {
  EXPECT_EQ(classify(KRB5KDC_ERR_PREAUTH_FAILED), LoginFailure::wrong_keytab);
  EXPECT_EQ(classify(KRB5KRB_AP_ERR_BAD_INTEGRITY), LoginFailure::wrong_keytab);
  EXPECT_EQ(classify(KRB5KRB_AP_ERR_BADKEYVER), LoginFailure::wrong_keytab);
  EXPECT_EQ(classify(KRB5_KT_KVNONOTFOUND), LoginFailure::wrong_keytab);
  EXPECT_EQ(classify(KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN), LoginFailure::unknown_principal);
  EXPECT_EQ(classify(KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN), LoginFailure::unknown_principal);
  EXPECT_EQ(classify(KRB5KDC_ERR_CLIENT_REVOKED), LoginFailure::principal_refused);
  EXPECT_EQ(classify(KRB5KDC_ERR_KEY_EXP), LoginFailure::principal_refused);
  EXPECT_EQ(classify(KRB5KRB_AP_ERR_SKEW), LoginFailure::clock_skew);
  EXPECT_EQ(classify(KRB5_KDCREP_SKEW), LoginFailure::clock_skew);
  EXPECT_EQ(classify(KRB5_KDC_UNREACH), LoginFailure::kdc_unreachable);
  EXPECT_EQ(classify(KRB5_REALM_UNKNOWN), LoginFailure::realm_unknown);
  EXPECT_EQ(classify(KRB5_REALM_CANT_RESOLVE), LoginFailure::realm_unknown);
  EXPECT_EQ(classify(KRB5_KT_NOTFOUND), LoginFailure::principal_not_in_keytab);
  EXPECT_EQ(classify(KRB5_KT_FORMAT), LoginFailure::keytab_unreadable);
  EXPECT_EQ(classify(KRB5_KEYTAB_BADVNO), LoginFailure::keytab_unreadable);
  EXPECT_EQ(classify(ENOENT), LoginFailure::keytab_unreadable);
  EXPECT_EQ(classify(EACCES), LoginFailure::keytab_unreadable);
  EXPECT_EQ(classify(KRB5_PARSE_MALFORMED), LoginFailure::bad_principal_name);
}

TEST(LoginFailureTest, AnythingElseIsOtherNotAGuess) {
  for (const std::int32_t code : {0, -1, INT_MIN, INT_MAX, static_cast<std::int32_t>(KRB5_CC_IO),
                                  static_cast<std::int32_t>(KRB5KDC_ERR_BADOPTION)}) {
    EXPECT_EQ(classify(code), LoginFailure::other) << code;
  }
  EXPECT_EQ(to_string(LoginFailure::other), "other");
  EXPECT_EQ(to_string(LoginFailure::clock_skew), "clock_skew");
}

TEST(LoginFailureTest, OneLineNamesLinkPrincipalKeytabCauseAndKrb5sWords) {
  const LoginOptions options{"kafka", "svc@EXAMPLE.COM", "/etc/hbingest/svc.keytab", "MEMORY:x"};
  const std::string text = describe_login_failure(options, LoginFailure::wrong_keytab, "Preauthentication failed");
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_NE(text.find("kerberos login for kafka failed"), std::string::npos) << text;
  EXPECT_NE(text.find("principal svc@EXAMPLE.COM"), std::string::npos) << text;
  EXPECT_NE(text.find("keytab /etc/hbingest/svc.keytab"), std::string::npos) << text;
  EXPECT_NE(text.find("wrong keytab"), std::string::npos) << text;
  EXPECT_NE(text.find("[krb5: Preauthentication failed]"), std::string::npos) << text;

  const std::string skew = describe_login_failure(options, LoginFailure::clock_skew, "Clock skew too great",
                                                  "this host's clock reads 2030-01-01T00:00:00Z");
  EXPECT_NE(skew.find("local clock may be off"), std::string::npos) << skew;
  EXPECT_NE(skew.find("2030-01-01T00:00:00Z"), std::string::npos) << skew;
  const std::string kdc =
      describe_login_failure(options, LoginFailure::kdc_unreachable, "Cannot contact any KDC for realm 'EXAMPLE.COM'",
                             "realm EXAMPLE.COM's KDC: kdc1.example.com:88");
  EXPECT_NE(kdc.find("no KDC of the realm answered"), std::string::npos) << kdc;
  EXPECT_NE(kdc.find("kdc1.example.com:88"), std::string::npos) << kdc;
}

// Paths that never reach a KDC: the keytab is checked first, and said to be what it is.
class KeytabLoginOffline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hbingest-krb-unit-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // A krb5.conf of our own: the test must not depend on the host's.
    conf_ = dir_ / "krb5.conf";
    std::ofstream(conf_)
        << "[libdefaults]\n default_realm = UNIT.TEST\n[realms]\n UNIT.TEST = {\n  kdc = 127.0.0.1:1\n }\n";
    ::setenv("KRB5_CONFIG", conf_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("KRB5_CONFIG");
    std::filesystem::remove_all(dir_);
  }
  LoginOptions options(const std::string& keytab) const {
    return {"hbase", "someone@UNIT.TEST", keytab, "MEMORY:hbingest-unit-" + std::to_string(::getpid())};
  }
  std::filesystem::path dir_;
  std::filesystem::path conf_;
};

TEST_F(KeytabLoginOffline, MissingKeytabIsUnreadableWithTheSystemsReason) {
  KeytabLogin login(options((dir_ / "absent.keytab").string()));
  try {
    login.login();
    FAIL() << "a missing keytab logged in";
  } catch (const LoginError& e) {
    EXPECT_EQ(e.failure(), LoginFailure::keytab_unreadable) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("absent.keytab"), std::string::npos) << e.what();
  }
}

TEST_F(KeytabLoginOffline, GarbageIsNotAKeytab) {
  const auto path = dir_ / "garbage.keytab";
  std::ofstream(path) << "\x05\x02\xff\xff\xff\xff this is not a keytab";
  KeytabLogin login(options(path.string()));
  EXPECT_THROW(
      {
        try {
          login.login();
        } catch (const LoginError& e) {
          EXPECT_TRUE(e.failure() == LoginFailure::keytab_unreadable ||
                      e.failure() == LoginFailure::principal_not_in_keytab)
              << e.what();
          throw;
        }
      },
      LoginError);
}

TEST_F(KeytabLoginOffline, KeytabWithoutThePrincipalListsWhatItHolds) {
  // A keytab written by krb5 itself, holding another principal's key (no KDC involved).
  const auto path = dir_ / "other.keytab";
  krb5_context context = nullptr;
  ASSERT_EQ(krb5_init_context(&context), 0);
  krb5_keytab keytab = nullptr;
  ASSERT_EQ(krb5_kt_resolve(context, ("WRFILE:" + path.string()).c_str(), &keytab), 0);
  krb5_keytab_entry entry{};
  ASSERT_EQ(krb5_parse_name(context, "other@UNIT.TEST", &entry.principal), 0);
  entry.vno = 1;
  static krb5_octet key_bytes[16] = {};
  entry.key.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
  entry.key.length = sizeof key_bytes;
  entry.key.contents = key_bytes;
  ASSERT_EQ(krb5_kt_add_entry(context, keytab, &entry), 0);
  krb5_free_principal(context, entry.principal);
  krb5_kt_close(context, keytab);
  krb5_free_context(context);

  KeytabLogin login(options(path.string()));
  try {
    login.login();
    FAIL() << "logged in with another principal's keytab";
  } catch (const LoginError& e) {
    EXPECT_EQ(e.failure(), LoginFailure::principal_not_in_keytab) << e.what();
    EXPECT_NE(std::string(e.what()).find("the keytab holds other@UNIT.TEST"), std::string::npos) << e.what();
  }
}

TEST_F(KeytabLoginOffline, MalformedPrincipalFailsAtConstruction) {
  auto bad = options((dir_ / "x.keytab").string());
  bad.principal = "a@b@c";
  try {
    KeytabLogin login(bad);
    FAIL() << "accepted " << bad.principal;
  } catch (const LoginError& e) {
    EXPECT_EQ(e.failure(), LoginFailure::bad_principal_name) << e.what();
  }
}

}  // namespace
}  // namespace hbingest::kerberos
