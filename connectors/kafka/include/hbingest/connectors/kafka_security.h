#pragma once
// TLS and SASL failures, told apart from the network trouble librdkafka rides out by itself.
// librdkafka retries a failed handshake or a refused login forever, logging each attempt; neither
// heals without an operator (a wrong CA, an expired certificate, a wrong password), so the daemon
// checks the connection once at startup and stops with the cause instead (KafkaSourceOptions and
// KafkaProducerOptions::startup_check_timeout).

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace hbingest::connectors {

enum class SecurityFailure {
  none,            // not a security problem (transport, timeouts, broker down...): retrying may help
  tls,             // TLS handshake or certificate verification failed (either side)
  authentication,  // SASL: wrong mechanism, user or password
};

// `code` is an rd_kafka_resp_err_t, as in KafkaError::code(); `reason` is librdkafka's text. A
// broker that refuses our certificate does so with a TLS alert after the client's side of the
// handshake is done (TLS 1.3): librdkafka then reports a receive failure (_TRANSPORT) whose text
// carries the alert ("SSL routines::sslv3 alert certificate unknown"); that is a TLS failure too.
// Other OpenSSL errors on _TRANSPORT (an unexpected EOF when a broker restarts) are not.
SecurityFailure classify_security_error(int code, std::string_view reason = {}) noexcept;

// Why the PEM certificate in `path` is not valid at `now` ("expired on 2020-02-01 00:00:00 UTC",
// "not valid before ..."), or nullopt when it is valid or cannot be read (librdkafka reports that).
std::optional<std::string> certificate_validity_problem(const std::string& path, std::time_t now);

// One sentence for an operator: `what` ("kafka consumer"), librdkafka's `reason` (which names the
// broker and the OpenSSL or SASL error), and the settings that decide it: security.protocol, the
// ssl.* file locations for a TLS failure, sasl.mechanisms and sasl.username for an authentication
// failure. Never a secret (passwords, keys' contents, tokens). For a TLS failure it also says when
// our own certificate (ssl.certificate.location) is expired or not yet valid: a broker refusing it
// says only "certificate unknown".
std::string describe_security_failure(std::string_view what, int code, std::string_view reason,
                                      const std::map<std::string, std::string>& properties);

// Whether `properties` ask for SASL GSSAPI (Kerberos): sasl.mechanism or its alias sasl.mechanisms,
// in any case, as librdkafka reads them.
bool uses_gssapi(const std::map<std::string, std::string>& properties);

// For a daemon that logs in from the keytab itself (kerberos::TicketKeeper into the cache KRB5CCNAME
// names): turns librdkafka's own re-login off. librdkafka would otherwise run
// sasl.kerberos.kinit.cmd (a `kinit` process) at start and every
// sasl.kerberos.min.time.before.relogin; 0 disables both (CONFIGURATION.md). cyrus-sasl then takes
// the ticket from the default cache, KRB5CCNAME, which the keeper keeps valid.
void use_own_kerberos_login(std::map<std::string, std::string>& properties);

}  // namespace hbingest::connectors
