#pragma once
// Each MIT krb5 handle wrapped once: a unique_ptr whose deleter frees it with the context it was made
// in. The context must outlive every handle made in it (declare it first).

#include <krb5.h>

#include <memory>
#include <string>
#include <type_traits>

namespace hbingest::kerberos::detail {

struct ContextDeleter {
  void operator()(krb5_context context) const noexcept { krb5_free_context(context); }
};
using ContextPtr = std::unique_ptr<std::remove_pointer_t<krb5_context>, ContextDeleter>;

struct PrincipalDeleter {
  krb5_context context = nullptr;
  void operator()(krb5_principal principal) const noexcept { krb5_free_principal(context, principal); }
};
using PrincipalPtr = std::unique_ptr<std::remove_pointer_t<krb5_principal>, PrincipalDeleter>;

struct KeytabDeleter {
  krb5_context context = nullptr;
  void operator()(krb5_keytab keytab) const noexcept { krb5_kt_close(context, keytab); }
};
using KeytabPtr = std::unique_ptr<std::remove_pointer_t<krb5_keytab>, KeytabDeleter>;

// Closes the handle; the cache itself stays (a MEMORY cache lives until destroyed, by name).
struct CcacheCloser {
  krb5_context context = nullptr;
  void operator()(krb5_ccache cache) const noexcept { krb5_cc_close(context, cache); }
};
using CcachePtr = std::unique_ptr<std::remove_pointer_t<krb5_ccache>, CcacheCloser>;

// Destroys the cache and its contents (the scratch cache a new ticket is written to).
struct CcacheDestroyer {
  krb5_context context = nullptr;
  void operator()(krb5_ccache cache) const noexcept { krb5_cc_destroy(context, cache); }
};
using ScratchCcachePtr = std::unique_ptr<std::remove_pointer_t<krb5_ccache>, CcacheDestroyer>;

struct InitCredsOptDeleter {
  krb5_context context = nullptr;
  void operator()(krb5_get_init_creds_opt* options) const noexcept { krb5_get_init_creds_opt_free(context, options); }
};
using InitCredsOptPtr = std::unique_ptr<krb5_get_init_creds_opt, InitCredsOptDeleter>;

struct KeytabEntryDeleter {
  krb5_context context = nullptr;
  void operator()(krb5_keytab_entry* entry) const noexcept {
    krb5_free_keytab_entry_contents(context, entry);
    delete entry;
  }
};
using KeytabEntryPtr = std::unique_ptr<krb5_keytab_entry, KeytabEntryDeleter>;

// krb5_creds filled in place by krb5_get_init_creds_keytab: its contents freed, the struct ours.
class Creds {
 public:
  explicit Creds(krb5_context context) noexcept : context_(context) {}
  ~Creds() {
    if (filled_) krb5_free_cred_contents(context_, &creds_);
  }
  Creds(const Creds&) = delete;
  Creds& operator=(const Creds&) = delete;
  // For the call that fills it; call filled() once it succeeded.
  krb5_creds* out() noexcept { return &creds_; }
  void filled() noexcept { filled_ = true; }
  const krb5_creds& get() const noexcept { return creds_; }

 private:
  krb5_context context_;
  krb5_creds creds_{};
  bool filled_ = false;
};

// krb5's message for `code` (with the context's extended message when it has one).
std::string error_message(krb5_context context, krb5_error_code code);

// A principal's name as text ("hbingest@HBSTACK.TEST"); "?" when it cannot be unparsed.
std::string unparse(krb5_context context, krb5_const_principal principal);

}  // namespace hbingest::kerberos::detail
