#include "hbingest/kerberos/keytab_login.h"

#include <fcntl.h>
#include <profile.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <utility>
#include <vector>

#include "krb5_handles.h"

namespace hbingest::kerberos {

namespace {

using detail::error_message;
using detail::unparse;

std::chrono::system_clock::time_point from_krb5(krb5_timestamp time) {
  // krb5_timestamp is a signed 32-bit count that MIT reads as unsigned past 2038 (ts2tt).
  return std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<std::uint32_t>(time)));
}

// The file behind a keytab name: "FILE:/k" and "/k" are files; "MEMORY:" and "KEYRING:" are not.
std::optional<std::string> keytab_file(const std::string& name) {
  if (name.rfind("FILE:", 0) == 0) return name.substr(5);
  if (name.rfind("WRFILE:", 0) == 0) return name.substr(7);
  const auto colon = name.find(':');
  if (colon != std::string::npos && name.find('/') > colon) return std::nullopt;  // another type
  return name;
}

std::string realm_of(krb5_const_principal principal) {
  return std::string(principal->realm.data, principal->realm.length);
}

void trace_to_spdlog(krb5_context, const krb5_trace_info* info, void* data) {
  if (info == nullptr || info->message == nullptr) return;  // the final call when tracing is turned off
  std::string_view message = info->message;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.remove_suffix(1);
  spdlog::debug("krb5 ({}): {}", *static_cast<const std::string*>(data), message);
}

std::string utc_text(std::time_t time) {
  std::tm tm{};
  gmtime_r(&time, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

struct KeytabLogin::Impl {
  explicit Impl(LoginOptions opts) : options(std::move(opts)) {
    krb5_context raw = nullptr;
    if (const krb5_error_code code = krb5_init_context(&raw); code != 0) {
      fail(classify(code), code, error_message(nullptr, code), "krb5.conf (KRB5_CONFIG) could not be read");
    }
    context.reset(raw);
    trace_link = options.link;
    krb5_set_trace_callback(context.get(), &trace_to_spdlog, &trace_link);
    krb5_principal parsed = nullptr;
    if (const krb5_error_code code = krb5_parse_name(context.get(), options.principal.c_str(), &parsed); code != 0) {
      fail(code);
    }
    principal = detail::PrincipalPtr(parsed, {context.get()});
  }

  [[noreturn]] void fail(LoginFailure failure, std::int32_t code, const std::string& krb5_message,
                         std::string_view extra = {}) const {
    throw LoginError(failure, code, describe_login_failure(options, failure, krb5_message, extra));
  }

  [[noreturn]] void fail(krb5_error_code code, std::string_view extra = {}) const {
    fail(classify(code), code, error_message(context.get(), code), extra);
  }

  // What krb5.conf says about the realm's KDCs, for an operator who has to find the one that is down.
  std::string kdcs_of_realm() const {
    const std::string realm = realm_of(principal.get());
    profile_t profile = nullptr;
    if (krb5_get_profile(context.get(), &profile) != 0) return {};
    const char* names[] = {"realms", realm.c_str(), "kdc", nullptr};
    char** values = nullptr;
    std::string text;
    if (profile_get_values(profile, names, &values) == 0 && values != nullptr) {
      for (char** value = values; *value != nullptr; ++value) text += (text.empty() ? "" : ", ") + std::string(*value);
      profile_free_list(values);
    }
    profile_release(profile);
    return text.empty() ? "realm " + realm + " has no kdc in krb5.conf (looked up in DNS, if allowed)"
                        : "realm " + realm + "'s KDC: " + text;
  }

  // The principals a keytab holds, when it holds none of ours.
  std::string principals_in(krb5_keytab keytab) const {
    std::vector<std::string> names;
    krb5_kt_cursor cursor = nullptr;
    if (krb5_kt_start_seq_get(context.get(), keytab, &cursor) != 0) return {};
    krb5_keytab_entry entry{};
    while (krb5_kt_next_entry(context.get(), keytab, &entry, &cursor) == 0) {
      std::string name = unparse(context.get(), entry.principal);
      krb5_free_keytab_entry_contents(context.get(), &entry);
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
    }
    krb5_kt_end_seq_get(context.get(), keytab, &cursor);
    if (names.empty()) return "the keytab is empty";
    std::string text = "the keytab holds ";
    for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : ", ") + names[i];
    return text;
  }

  detail::KeytabPtr open_keytab() const {
    // krb5 reports a missing or unreadable file as "Key table entry not found" at best: say which.
    if (const auto file = keytab_file(options.keytab)) {
      const int fd = ::open(file->c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        const int err = errno;
        fail(LoginFailure::keytab_unreadable, err, std::strerror(err));
      }
      ::close(fd);
    }
    krb5_keytab raw = nullptr;
    if (const krb5_error_code code = krb5_kt_resolve(context.get(), options.keytab.c_str(), &raw); code != 0) {
      fail(LoginFailure::keytab_unreadable, code, error_message(context.get(), code));
    }
    detail::KeytabPtr keytab(raw, {context.get()});
    detail::KeytabEntryPtr entry(new krb5_keytab_entry{}, {context.get()});
    const krb5_error_code code = krb5_kt_get_entry(context.get(), keytab.get(), principal.get(), 0, 0, entry.get());
    if (code == KRB5_KT_NOTFOUND) fail(code, principals_in(keytab.get()));
    if (code != 0) fail(LoginFailure::keytab_unreadable, code, error_message(context.get(), code));
    return keytab;
  }

  Ticket login() {
    const detail::KeytabPtr keytab = open_keytab();
    krb5_get_init_creds_opt* raw_opt = nullptr;
    if (const krb5_error_code code = krb5_get_init_creds_opt_alloc(context.get(), &raw_opt); code != 0) fail(code);
    const detail::InitCredsOptPtr opt(raw_opt, {context.get()});
    detail::Creds creds(context.get());
    const krb5_error_code code =
        krb5_get_init_creds_keytab(context.get(), creds.out(), principal.get(), keytab.get(), 0, nullptr, opt.get());
    if (code != 0) {
      const LoginFailure failure = classify(code);
      if (failure == LoginFailure::kdc_unreachable || failure == LoginFailure::realm_unknown) {
        fail(code, kdcs_of_realm());
      }
      if (failure == LoginFailure::clock_skew) fail(code, "this host's clock reads " + utc_text(std::time(nullptr)));
      fail(code);
    }
    creds.filled();
    store(creds.get());
    const krb5_ticket_times& times = creds.get().times;
    return Ticket{unparse(context.get(), creds.get().client),
                  from_krb5(times.starttime != 0 ? times.starttime : times.authtime), from_krb5(times.endtime)};
  }

  // A fresh cache of its own, then one move over the named cache (see keytab_login.h).
  void store(const krb5_creds& creds) {
    krb5_ccache raw = nullptr;
    if (const krb5_error_code code = krb5_cc_new_unique(context.get(), "MEMORY", nullptr, &raw); code != 0) {
      fail(code);
    }
    detail::ScratchCcachePtr scratch(raw, {context.get()});
    if (const krb5_error_code code = krb5_cc_initialize(context.get(), scratch.get(), creds.client); code != 0) {
      fail(code);
    }
    if (const krb5_error_code code = krb5_cc_store_cred(context.get(), scratch.get(), const_cast<krb5_creds*>(&creds));
        code != 0) {
      fail(code);
    }
    krb5_ccache named_raw = nullptr;
    if (const krb5_error_code code = krb5_cc_resolve(context.get(), options.ccache.c_str(), &named_raw); code != 0) {
      fail(code, "credential cache " + options.ccache);
    }
    const detail::CcachePtr named(named_raw, {context.get()});
    if (const krb5_error_code code = krb5_cc_move(context.get(), scratch.get(), named.get()); code != 0) {
      fail(code, "credential cache " + options.ccache);
    }
    (void)scratch.release();  // krb5_cc_move destroyed it and freed the handle
  }

  LoginOptions options;
  std::string trace_link;  // the trace callback's data: lives as long as the context
  detail::ContextPtr context;
  detail::PrincipalPtr principal;  // after the context: freed before it
};

KeytabLogin::KeytabLogin(LoginOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
KeytabLogin::~KeytabLogin() = default;
Ticket KeytabLogin::login() { return impl_->login(); }
const LoginOptions& KeytabLogin::options() const noexcept { return impl_->options; }

}  // namespace hbingest::kerberos
