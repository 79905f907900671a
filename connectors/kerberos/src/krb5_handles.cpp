#include "krb5_handles.h"

namespace hbingest::kerberos::detail {

std::string error_message(krb5_context context, krb5_error_code code) {
  const char* message = krb5_get_error_message(context, code);
  std::string text = message != nullptr ? message : "krb5 error " + std::to_string(code);
  krb5_free_error_message(context, message);
  return text;
}

std::string unparse(krb5_context context, krb5_const_principal principal) {
  char* name = nullptr;
  if (krb5_unparse_name(context, principal, &name) != 0 || name == nullptr) return "?";
  std::string text = name;
  krb5_free_unparsed_name(context, name);
  return text;
}

}  // namespace hbingest::kerberos::detail
