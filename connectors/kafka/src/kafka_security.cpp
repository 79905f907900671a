#include "hbingest/connectors/kafka_security.h"

#include <librdkafka/rdkafka.h>
#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

namespace hbingest::connectors {

namespace {

bool is_tls_alert(std::string_view reason) noexcept {
  return reason.find("SSL routines::") != std::string_view::npos && reason.find(" alert ") != std::string_view::npos;
}

std::string asn1_time_text(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "?";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace

std::optional<std::string> certificate_validity_problem(const std::string& path, std::time_t now) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return std::nullopt;
  const std::unique_ptr<X509, void (*)(X509*)> cert(PEM_read_X509(file.get(), nullptr, nullptr, nullptr), &X509_free);
  if (!cert) return std::nullopt;
  if (X509_cmp_time(X509_get0_notAfter(cert.get()), &now) < 0) {
    return "expired on " + asn1_time_text(X509_get0_notAfter(cert.get()));
  }
  if (X509_cmp_time(X509_get0_notBefore(cert.get()), &now) > 0) {
    return "not valid before " + asn1_time_text(X509_get0_notBefore(cert.get()));
  }
  return std::nullopt;
}

SecurityFailure classify_security_error(int code, std::string_view reason) noexcept {
  if (code == RD_KAFKA_RESP_ERR__TRANSPORT) return is_tls_alert(reason) ? SecurityFailure::tls : SecurityFailure::none;
  switch (static_cast<rd_kafka_resp_err_t>(code)) {
    case RD_KAFKA_RESP_ERR__SSL:  // handshake, certificate verification, a broker refusing our certificate
      return SecurityFailure::tls;
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:  // librdkafka's SASL client gave up
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
      return SecurityFailure::authentication;
    default:
      return SecurityFailure::none;
  }
}

std::string describe_security_failure(std::string_view what, int code, std::string_view reason,
                                      const std::map<std::string, std::string>& properties) {
  const SecurityFailure kind = classify_security_error(code, reason);
  std::string out(what);
  out += kind == SecurityFailure::authentication ? ": SASL authentication failed: " : ": TLS failed: ";
  out += reason;
  // The settings that decide this kind of failure; file locations and names, never a secret.
  static const char* const kTlsKeys[] = {"security.protocol", "ssl.ca.location", "ssl.certificate.location",
                                         "ssl.key.location", "ssl.endpoint.identification.algorithm"};
  static const char* const kSaslKeys[] = {
      "security.protocol",    "sasl.mechanisms",           "sasl.mechanism", "sasl.username", "sasl.kerberos.principal",
      "sasl.kerberos.keytab", "sasl.kerberos.service.name"};
  std::string settings;
  const auto add = [&](const char* key) {
    const auto it = properties.find(key);
    if (it == properties.end()) return;
    settings += settings.empty() ? "" : ", ";
    settings += std::string(key) + "=" + it->second;
  };
  if (kind == SecurityFailure::authentication) {
    for (const char* key : kSaslKeys) add(key);
  } else {
    for (const char* key : kTlsKeys) add(key);
  }
  if (!settings.empty()) out += " (" + settings + ")";
  if (kind == SecurityFailure::authentication && uses_gssapi(properties)) {
    // cyrus-sasl's GSSAPI words ("Unspecified GSS failure", "Server not found in Kerberos
    // database") rarely say which side is wrong: point at what to check.
    out +=
        "; Kerberos: the broker's principal is sasl.kerberos.service.name/<broker host as in "
        "bootstrap.servers and advertised.listeners>, and the client's ticket comes from the daemon's own "
        "keytab login (see the 'kerberos' log lines)";
  }
  if (kind == SecurityFailure::tls) {
    const auto cert = properties.find("ssl.certificate.location");
    if (cert != properties.end()) {
      if (const auto problem = certificate_validity_problem(cert->second, std::time(nullptr))) {
        out += "; the client certificate " + cert->second + " " + *problem;
      }
    }
  }
  out += " [" + std::string(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(code))) + "]";
  return out;
}

bool uses_gssapi(const std::map<std::string, std::string>& properties) {
  for (const char* key : {"sasl.mechanism", "sasl.mechanisms"}) {
    const auto it = properties.find(key);
    if (it == properties.end()) continue;
    std::string value = it->second;
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::toupper(c); });
    if (value == "GSSAPI") return true;
  }
  return false;
}

void use_own_kerberos_login(std::map<std::string, std::string>& properties) {
  properties["sasl.kerberos.min.time.before.relogin"] = "0";
}

}  // namespace hbingest::connectors
