#include <krb5.h>

#include <cerrno>
#include <string>

#include "hbingest/kerberos/keytab_login.h"

namespace hbingest::kerberos {

LoginFailure classify(std::int32_t krb5_code) noexcept {
  switch (krb5_code) {
    // The KDC could not decrypt our encrypted timestamp (preauth) or we could not decrypt its reply:
    // the key in the keytab is not the principal's current one (a new password, a re-exported key
    // with a higher kvno), or the keytab has the principal only under another key version.
    case KRB5KDC_ERR_PREAUTH_FAILED:
    case KRB5_PREAUTH_FAILED:
    case KRB5KRB_AP_ERR_BAD_INTEGRITY:
    case KRB5KRB_AP_ERR_BADKEYVER:
    case KRB5KRB_AP_ERR_MODIFIED:
    case KRB5_KT_KVNONOTFOUND:
    case KRB5KDC_ERR_ETYPE_NOSUPP:
      return LoginFailure::wrong_keytab;
    case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
    // No krbtgt for the realm: the principal names a realm this KDC does not serve.
    case KRB5KDC_ERR_S_PRINCIPAL_UNKNOWN:
    case KRB5KDC_ERR_WRONG_REALM:
      return LoginFailure::unknown_principal;
    case KRB5KDC_ERR_CLIENT_REVOKED:
    case KRB5KDC_ERR_NAME_EXP:
    case KRB5KDC_ERR_KEY_EXP:
    case KRB5KDC_ERR_POLICY:
    case KRB5KDC_ERR_CLIENT_NOTYET:
      return LoginFailure::principal_refused;
    case KRB5KRB_AP_ERR_SKEW:
    case KRB5_KDCREP_SKEW:
      return LoginFailure::clock_skew;
    case KRB5_KDC_UNREACH:
    case KRB5KDC_ERR_SVC_UNAVAILABLE:
      return LoginFailure::kdc_unreachable;
    case KRB5_REALM_UNKNOWN:
    case KRB5_REALM_CANT_RESOLVE:
      return LoginFailure::realm_unknown;
    case KRB5_KT_NOTFOUND:
      return LoginFailure::principal_not_in_keytab;
    case KRB5_KT_BADNAME:
    case KRB5_KT_FORMAT:
    case KRB5_KEYTAB_BADVNO:
    case KRB5_KT_END:
    case ENOENT:
    case EACCES:
    case EPERM:
    case EISDIR:
      return LoginFailure::keytab_unreadable;
    case KRB5_PARSE_MALFORMED:
      return LoginFailure::bad_principal_name;
    default:
      return LoginFailure::other;
  }
}

std::string_view to_string(LoginFailure failure) noexcept {
  switch (failure) {
    case LoginFailure::wrong_keytab:
      return "wrong_keytab";
    case LoginFailure::unknown_principal:
      return "unknown_principal";
    case LoginFailure::principal_refused:
      return "principal_refused";
    case LoginFailure::clock_skew:
      return "clock_skew";
    case LoginFailure::kdc_unreachable:
      return "kdc_unreachable";
    case LoginFailure::realm_unknown:
      return "realm_unknown";
    case LoginFailure::keytab_unreadable:
      return "keytab_unreadable";
    case LoginFailure::principal_not_in_keytab:
      return "principal_not_in_keytab";
    case LoginFailure::bad_principal_name:
      return "bad_principal_name";
    case LoginFailure::other:
      return "other";
  }
  return "other";
}

namespace {

std::string_view cause_text(LoginFailure failure) noexcept {
  switch (failure) {
    case LoginFailure::wrong_keytab:
      return "wrong keytab: its key for the principal is not the one the KDC holds (the password was changed or "
             "the key re-exported with a new key version since the keytab was written); export the keytab again";
    case LoginFailure::unknown_principal:
      return "the KDC does not know this principal (check its spelling and its realm)";
    case LoginFailure::principal_refused:
      return "the KDC refuses this principal (expired, disabled, locked or against its policy)";
    case LoginFailure::clock_skew:
      return "clock skew: this host's clock and the KDC's differ by more than the KDC allows (5 minutes by "
             "default); the local clock may be off (check NTP/chrony)";
    case LoginFailure::kdc_unreachable:
      return "no KDC of the realm answered (down, firewalled, or a wrong address in krb5.conf)";
    case LoginFailure::realm_unknown:
      return "no KDC is known for the principal's realm (add it to [realms] in krb5.conf, or fix the realm)";
    case LoginFailure::keytab_unreadable:
      return "the keytab cannot be read (missing, no permission for this user, or not a keytab)";
    case LoginFailure::principal_not_in_keytab:
      return "the keytab holds no key of this principal";
    case LoginFailure::bad_principal_name:
      return "the principal is not a valid Kerberos name";
    case LoginFailure::other:
      return "the KDC login failed";
  }
  return "the KDC login failed";
}

}  // namespace

std::string describe_login_failure(const LoginOptions& options, LoginFailure failure, std::string_view krb5_message,
                                   std::string_view detail) {
  std::string out = "kerberos login for " + options.link + " failed (principal " + options.principal + ", keytab " +
                    options.keytab + "): ";
  out += cause_text(failure);
  if (!detail.empty()) {
    out += "; ";
    out += detail;
  }
  if (!krb5_message.empty()) {
    out += " [krb5: ";
    out += krb5_message;
    out += "]";
  }
  return out;
}

}  // namespace hbingest::kerberos
