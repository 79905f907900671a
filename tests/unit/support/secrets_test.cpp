// The one redaction list (support/secrets.h) over every secret-carrying property of librdkafka's
// CONFIGURATION.md (2.0.2 as packaged, plus the properties of later releases), the Java client's
// names users paste, our own options, and look-alikes that are not secret.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "hbingest/support/secrets.h"

namespace hbingest::support {
namespace {

using ::testing::HasSubstr;

// Every property that carries a secret value.
const std::vector<std::string> kSecretKeys = {
    // librdkafka
    "ssl.key.password",
    "ssl.key.pem",
    "ssl_key",
    "ssl.keystore.password",
    "sasl.password",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.assertion.private.key.pem",
    "sasl.oauthbearer.token.endpoint.url",  // a URL may carry user:password@
    "sasl.kerberos.kinit.cmd",
    // Java client names that users paste into librdkafka properties
    "sasl.jaas.config",
    "ssl.truststore.password",
    "ssl.keystore.key",
    // ours, and what other options would be named
    "http.bearer_token",
    "http.tls.key_password",
    "http.tls.key",
    "http.tls.client_key",
    "hbase.tls.key.passphrase",
    "schema_registry.basic_auth.password",
    "some.future.api_token",
    "vendor.apikey",
    "credentials",
    // case and separators do not matter; full config paths work
    "SASL.PASSWORD",
    "kafka.properties.sasl.password",
    "dlq.properties.sasl.oauthbearer.extensions",
    "kafka.properties.ssl.key.pem",
};

// Look-alikes: paths, public certificates, identifiers, fixed vocabularies.
const std::vector<std::string> kNotSecretKeys = {
    "ssl.key.location",  // a path: printed, so operators see which file is mounted
    "schema_registry.tls.key_file",
    "schema_registry.basic_auth.user",
    "schema_registry.url",  // credentials in it are refused (check-config), so it can be printed
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.certificate.location",
    "ssl.certificate.pem",  // public
    "ssl.ca.location",
    "ssl.ca.pem",
    "https.ca.pem",
    "ssl.crl.location",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "sasl.username",
    "sasl.mechanism",
    "sasl.kerberos.keytab",
    "sasl.kerberos.principal",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.grant.type",
    "sasl.oauthbearer.assertion.algorithm",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.assertion.file",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "security.protocol",
    "client.id",
    "group.id",
    "bootstrap.servers",
    "message.max.bytes",
    "http.token_file",  // where the token is, not the token
    "http.token_env",
    "http.listen",
    "routes[0].key",  // the row key spec
    "routes[0].key_file",
    "preset_params.key_field",
    "kafka.group_id",
    "decode.ttl_field",
    "",
};

TEST(SecretKeys, EverySecretPropertyIsRedacted) {
  for (const auto& key : kSecretKeys) EXPECT_TRUE(is_secret_key(key)) << key;
}

TEST(SecretKeys, LookAlikesThatAreNotSecretArePrinted) {
  for (const auto& key : kNotSecretKeys) EXPECT_FALSE(is_secret_key(key)) << key;
}

TEST(Scrub, ReplacesEveryOccurrenceLongestFirst) {
  EXPECT_EQ(scrub("a hunter2 b hunter2", {"hunter2"}), "a *** b ***");
  // A secret containing another one is replaced whole, not left half visible.
  EXPECT_EQ(scrub("x=abcd1234", {"abcd", "abcd1234"}), "x=***");
  EXPECT_EQ(scrub("nothing here", {"hunter2"}), "nothing here");
  // Secrets too short to search for in free text are left alone (check-config warns about them).
  EXPECT_EQ(scrub("pw=abc", {"abc"}), "pw=abc");
  EXPECT_EQ(scrub("pw=abc", {""}), "pw=abc");
}

TEST(Scrub, RegisteredSecretsAreScrubbedFromAnyThread) {
  clear_registered_secrets();
  EXPECT_EQ(scrub_registered("sasl failed for s3cret-value"), "sasl failed for s3cret-value");
  register_secrets({"s3cret-value"});
  register_secrets({"s3cret-value", "other-secret"});  // repeated loads (SIGHUP) do not pile up
  std::string from_thread;
  std::thread([&] { from_thread = scrub_registered("x other-secret y s3cret-value"); }).join();
  EXPECT_EQ(from_thread, "x *** y ***");
  clear_registered_secrets();
  EXPECT_THAT(scrub_registered("s3cret-value"), HasSubstr("s3cret-value"));
}

}  // namespace
}  // namespace hbingest::support
