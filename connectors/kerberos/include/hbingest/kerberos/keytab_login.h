#pragma once
// Logging in from a keytab into a private, named credential cache: what `kinit -k -t KEYTAB
// PRINCIPAL` does, without a process and without the user's default cache. Each link has its own
// cache ("MEMORY:hbingest-hbase", "MEMORY:hbingest-kafka"): a MEMORY cache lives in the process, is
// shared by every krb5 context in it (GSSAPI's in our Thrift transport, cyrus-sasl's in librdkafka)
// and is never written to disk.
//
// A new ticket is written to a fresh cache of its own and then moved over the named one with
// krb5_cc_move. MIT krb5 1.20 implements that move for MEMORY caches as one replace under the cache's
// lock (cc_memory.c, krb5_mcc_replace): a reader in another thread sees the old ticket or the new
// one, never an empty cache. (A reader iterating the cache across the replace sees its cursor end
// early, as after any reinitialisation; GSSAPI looks its TGT up with a locked retrieve.)

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hbingest::kerberos {

// What a failed login means to an operator. Decided from krb5's error code only (classify()).
enum class LoginFailure {
  wrong_keytab,             // the keytab's key is not the principal's current one (preauth/decrypt failed, kvno)
  unknown_principal,        // the KDC has no such client principal
  principal_refused,        // the KDC knows it but refuses it: expired, disabled, locked, policy
  clock_skew,               // the local clock and the KDC's differ by more than the KDC allows
  kdc_unreachable,          // no KDC of the realm answered
  realm_unknown,            // no KDC is known for the realm (krb5.conf [realms] or DNS)
  keytab_unreadable,        // the keytab file is missing, unreadable or not a keytab
  principal_not_in_keytab,  // the keytab holds no key of that principal
  bad_principal_name,       // the principal is not a valid name
  other,
};

// krb5_error_code (an int32) → kind. Pure; any value.
LoginFailure classify(std::int32_t krb5_code) noexcept;
// A short name for logs and tests ("wrong_keytab").
std::string_view to_string(LoginFailure failure) noexcept;

struct LoginOptions {
  std::string link;       // "hbase", "kafka": names the link in every message
  std::string principal;  // "hbingest@HBSTACK.TEST"; without a realm, krb5.conf's default_realm
  std::string keytab;     // a path, or a krb5 keytab name ("FILE:/path")
  std::string ccache;     // the named cache to keep filled: "MEMORY:hbingest-hbase"
};

// One line for an operator: the link, the principal, the keytab, the cause in plain words, then
// krb5's own message: "kerberos login for kafka failed (principal hbingest@R, keytab /k.keytab):
// wrong keytab: ... [krb5: Preauthentication failed]". `detail` adds what only the caller knows
// (the realm's KDCs from krb5.conf, the principals a keytab holds). Never a key or a password.
std::string describe_login_failure(const LoginOptions& options, LoginFailure failure, std::string_view krb5_message,
                                   std::string_view detail = {});

class LoginError : public std::runtime_error {
 public:
  LoginError(LoginFailure failure, std::int32_t code, const std::string& message)
      : std::runtime_error(message), failure_(failure), code_(code) {}
  LoginFailure failure() const noexcept { return failure_; }
  std::int32_t code() const noexcept { return code_; }  // krb5's, or errno for a keytab file

 private:
  LoginFailure failure_;
  std::int32_t code_;
};

// The TGT a login obtained.
struct Ticket {
  std::string client;                             // the principal as the KDC named it
  std::chrono::system_clock::time_point start;    // authtime (or starttime)
  std::chrono::system_clock::time_point expires;  // endtime
};

// One login context: a krb5 context of its own (krb5 contexts are not thread-safe), krb5's trace
// routed to spdlog at debug level. Not thread-safe: one thread logs in at a time (TicketKeeper's).
class KeytabLogin {
 public:
  // Throws LoginError (bad_principal_name, a context that cannot be made from krb5.conf).
  explicit KeytabLogin(LoginOptions options);
  ~KeytabLogin();
  KeytabLogin(const KeytabLogin&) = delete;
  KeytabLogin& operator=(const KeytabLogin&) = delete;

  // Asks the KDC for a new TGT with the keytab's key and swaps it into options().ccache (see the
  // top of this file). Throws LoginError with the one-line description; the named cache keeps its
  // previous ticket then.
  Ticket login();
  const LoginOptions& options() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::kerberos
