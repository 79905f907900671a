#pragma once
// The kerberized stack's realm for the integration tests (stack/hbstack with HBSTACK_KERBEROS=1,
// `eval "$(stack/hbstack env)"`): its krb5.conf, keytabs and KDC port from the environment.

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace hbingest::kerberos::testing {

struct KerberosStack {
  std::string krb5_config;
  std::string realm;
  std::string keytab_dir;
  std::string kdc_port;

  std::string keytab(const std::string& name) const { return keytab_dir + "/" + name; }
  std::string principal(const std::string& name) const { return name + "@" + realm; }
};

inline std::optional<KerberosStack> kerberos_stack() {
  const char* config = std::getenv("HBSTACK_KRB5_CONFIG");
  const char* realm = std::getenv("HBSTACK_REALM");
  const char* keytabs = std::getenv("HBSTACK_KEYTAB_DIR");
  const char* port = std::getenv("HBSTACK_KDC_PORT");
  if (config == nullptr || realm == nullptr || keytabs == nullptr || port == nullptr || *config == '\0') {
    return std::nullopt;
  }
  return KerberosStack{config, realm, keytabs, port};
}

// In SetUp: skips the test without a kerberized stack, else points krb5 at the stack's krb5.conf
// (before any thread of the test starts).
#define HBINGEST_REQUIRE_KERBEROS_STACK(stack)                                                                     \
  do {                                                                                                             \
    auto found = ::hbingest::kerberos::testing::kerberos_stack();                                                  \
    if (!found) {                                                                                                  \
      GTEST_SKIP() << "no kerberized stack: HBSTACK_KRB5_CONFIG is not set (HBSTACK_KERBEROS=1 stack/hbstack up; " \
                      "eval \"$(HBSTACK_KERBEROS=1 stack/hbstack env)\")";                                         \
    }                                                                                                              \
    (stack) = *found;                                                                                              \
    ::setenv("KRB5_CONFIG", (stack).krb5_config.c_str(), 1);                                                       \
  } while (false)

}  // namespace hbingest::kerberos::testing
