#pragma once
// Secrets: the one rule for which configuration keys hold one, and the one scrubber that keeps
// their values out of everything the process prints (check-config, --print-effective, logs,
// librdkafka's own log lines, a command's last error message).
//
// Which keys (is_secret_key): the name is split into words at '.', '_' and '-' and lowercased.
//  * A key naming where a secret is rather than the secret is NOT secret: its last word is
//    location, file, path, dir or env (ssl.key.location, ssl.keystore.location,
//    sasl.oauthbearer.assertion.private.key.file, http.token_file, http.token_env). Operators need
//    to see which file is mounted; the file's contents never appear (see "Which values").
//  * A word containing password, passwd, passphrase, secret, token, credential, jaas or apikey:
//    ssl.key.password, ssl.keystore.password, ssl.truststore.password, sasl.password,
//    sasl.oauthbearer.client.secret, sasl.oauthbearer.assertion.private.key.passphrase,
//    sasl.oauthbearer.token.endpoint.url (a URL may carry user:password@), sasl.jaas.config,
//    http.bearer_token, and any *password* / *token* option added later without registering.
//  * Key material: words "key" and "pem" together (ssl.key.pem,
//    sasl.oauthbearer.assertion.private.key.pem), or a last word "key" after ssl, tls, keystore,
//    private or client (ssl_key, ssl.keystore.key, tls.key, tls.client_key).
//  * Named: sasl.oauthbearer.config and sasl.oauthbearer.extensions (they embed principals,
//    tokens and extension values), sasl.kerberos.kinit.cmd (a shell command that may carry one).
// Not secret: public material (ssl.certificate.pem, ssl.ca.pem, https.ca.pem), identifiers
// (sasl.username, sasl.oauthbearer.client.id, client.id) and fixed vocabularies
// (sasl.oauthbearer.method, grant.type, assertion.algorithm, security.protocol). The rest of the
// sasl.oauthbearer.* family is deliberately not redacted as a whole: its values such as "default",
// "client_credentials" or a client id would then be scrubbed from every log line.
//
// Which values (SecretRegistry): every value the config loader resolved for a secret key, and
// every value read through ${file:PATH} (files are how secrets are mounted) whatever its key. A
// secret shorter than kMinScrubbedLength characters cannot be searched for in free text without
// mangling it; check-config warns about such secrets.
//
// Thread safety: is_secret_key and scrub are pure. The registry may be read from any thread
// (librdkafka logs from its own threads) while it is added to.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::support {

inline constexpr std::string_view kRedacted = "***";
inline constexpr std::size_t kMinScrubbedLength = 4;

// Whether a configuration key or librdkafka property holds a secret. Accepts a bare property
// ("sasl.password") or a full config path ("kafka.properties.sasl.password").
bool is_secret_key(std::string_view name);

// `text` with every occurrence of each secret (of at least kMinScrubbedLength characters)
// replaced by kRedacted. Longer secrets first, so a secret containing another is replaced whole.
std::string scrub(std::string_view text, const std::vector<std::string>& secrets);

// The process's known secret values, for output that does not see the config: the log formatter,
// librdkafka's log and error callbacks, main's last-chance error message.
void register_secrets(const std::vector<std::string>& secrets);
// scrub() with every registered secret.
std::string scrub_registered(std::string_view text);
// Forgets every registered secret (tests).
void clear_registered_secrets();

}  // namespace hbingest::support
