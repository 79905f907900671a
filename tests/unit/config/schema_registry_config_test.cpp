// The schema_registry: section: defaults, the password as a secret, and the cross-field rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "hbingest/config/loader.h"

namespace hbingest::config {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kWithoutRegistry = R"(kafka:
  bootstrap_servers: 127.0.0.1:19092
  topics: [events]
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - {event_types: [login], table: events, preset: events}
)";

std::vector<std::string> problems_with(const std::string& extra) {
  return try_load_config_text(std::string(kWithoutRegistry) + extra, "test.yaml").problems;
}

TEST(SchemaRegistryConfig, DefaultsToNoRegistry) {
  const Config c = load_config_text(kWithoutRegistry, "test.yaml");
  EXPECT_FALSE(c.schema_registry.url);
  EXPECT_EQ(c.schema_registry.timeout, 5000ms);
  EXPECT_EQ(c.schema_registry.cache_max_schemas, 1000u);
  EXPECT_EQ(c.schema_registry.cache_max_bytes, 64u * 1024 * 1024);
}

TEST(SchemaRegistryConfig, ReadsEverySettingWithThePasswordFromAFileAsASecret) {
  const auto dir = std::filesystem::temp_directory_path() / ("hbingest-sr-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "password") << "registry-s3cret\n";
  std::ofstream(dir / "ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir / "client.pem") << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir / "client.key") << "-----BEGIN PRIVATE KEY-----\n";
  std::ofstream(dir / "config.yaml") << kWithoutRegistry << R"(decode:
  format: avro
  topic_formats: {legacy: json}
schema_registry:
  url: https://registry.example.com:8081/apis/ccompat/v7
  basic_auth: {user: hbingest, password: "${file:password}"}
  tls: {ca_file: ca.pem, cert_file: client.pem, key_file: client.key}
  timeout: 1500ms
  cache_max_schemas: 50
  cache_max_bytes: 1MiB
)";
  const LoadResult result = try_load_config(dir / "config.yaml");
  ASSERT_THAT(result.problems, IsEmpty());
  const SchemaRegistryConfig& sr = result.config.schema_registry;
  EXPECT_EQ(sr.url, "https://registry.example.com:8081/apis/ccompat/v7");
  EXPECT_EQ(sr.basic_auth.user, "hbingest");
  EXPECT_EQ(sr.basic_auth.password, "registry-s3cret");
  EXPECT_EQ(sr.tls.ca_file, dir / "ca.pem");
  EXPECT_EQ(sr.tls.key_file, dir / "client.key");
  EXPECT_EQ(sr.timeout, 1500ms);
  EXPECT_EQ(sr.cache_max_schemas, 50u);
  EXPECT_EQ(sr.cache_max_bytes, 1024u * 1024);
  EXPECT_THAT(result.config.secrets, Contains("registry-s3cret"));

  const std::string effective = effective_config_yaml(result.config);
  EXPECT_THAT(effective, Not(HasSubstr("registry-s3cret")));
  EXPECT_EQ(YAML::Load(effective)["schema_registry"]["basic_auth"]["password"].as<std::string>(), "***");
  std::filesystem::remove_all(dir);
}

TEST(SchemaRegistryConfig, APasswordFromTheEnvironmentIsASecretToo) {
  ::setenv("HBINGEST_TEST_REGISTRY_PASSWORD", "env-registry-pw", 1);
  const auto result = try_load_config_text(std::string(kWithoutRegistry) + R"(schema_registry:
  url: http://127.0.0.1:18081/apis/ccompat/v7
  basic_auth: {user: u, password: "${HBINGEST_TEST_REGISTRY_PASSWORD}"}
)",
                                           "test.yaml");
  ASSERT_THAT(result.problems, IsEmpty());
  EXPECT_EQ(result.config.schema_registry.basic_auth.password, "env-registry-pw");
  EXPECT_THAT(result.config.secrets, Contains("env-registry-pw"));
}

TEST(SchemaRegistryConfig, AFormatWithSchemasNeedsTheUrl) {
  EXPECT_THAT(problems_with("decode: {format: protobuf}\n"),
              Contains(AllOf(HasSubstr("decode.format"), HasSubstr("'protobuf'"), HasSubstr("schema_registry.url"))));
  EXPECT_THAT(problems_with("decode: {topic_formats: {orders: json_schema, logs: json}}\n"),
              Contains(AllOf(HasSubstr("decode.topic_formats.orders"), HasSubstr("'json_schema'"),
                             HasSubstr("schema_registry.url"))));
  EXPECT_THAT(problems_with("decode: {topic_formats: {logs: json}}\n"), IsEmpty());
  EXPECT_THAT(problems_with("decode: {format: avro}\nschema_registry: {url: http://127.0.0.1:18081}\n"), IsEmpty());
}

TEST(SchemaRegistryConfig, KeyFormatsReadAndAStructuredOneNeedsTheUrl) {
  const auto result = try_load_config_text(std::string(kWithoutRegistry) + R"(decode:
  key_format: bytes
  topic_key_formats: {orders: avro, users: json}
schema_registry: {url: http://127.0.0.1:18081}
)",
                                           "test.yaml");
  ASSERT_THAT(result.problems, IsEmpty());
  EXPECT_EQ(result.config.decode.key_format, KeyFormat::bytes);
  EXPECT_EQ(result.config.decode.topic_key_formats.at("orders"), "avro");
  EXPECT_EQ(try_load_config_text(kWithoutRegistry, "test.yaml").config.decode.key_format, KeyFormat::text)
      << "the default";

  EXPECT_THAT(
      problems_with("decode: {key_format: protobuf}\n"),
      Contains(AllOf(HasSubstr("decode.key_format"), HasSubstr("'protobuf'"), HasSubstr("schema_registry.url"))));
  EXPECT_THAT(problems_with("decode: {topic_key_formats: {orders: json_schema}}\n"),
              Contains(AllOf(HasSubstr("decode.topic_key_formats.orders"), HasSubstr("schema_registry.url"))));
  EXPECT_THAT(problems_with("decode: {key_format: json, topic_key_formats: {a: text, b: bytes}}\n"), IsEmpty())
      << "json, text and bytes keys need no registry";
  EXPECT_THAT(problems_with("decode: {topic_key_formats: {orders: string}}\n"),
              Contains(AllOf(HasSubstr("decode.topic_key_formats.orders"), HasSubstr("unknown key format 'string'"))));
  EXPECT_THAT(problems_with("decode: {key_format: string}\n"), Contains(HasSubstr("decode.key_format")));
}

TEST(SchemaRegistryConfig, RejectsUrlsAndSettingsTheClientCannotUse) {
  EXPECT_THAT(problems_with("schema_registry: {url: 'registry:8081'}\n"),
              Contains(AllOf(HasSubstr("schema_registry.url"), HasSubstr("http:// or https://"))));
  const auto with_credentials = problems_with("schema_registry: {url: 'https://u:hunter2-pw@registry'}\n");
  EXPECT_THAT(with_credentials, Contains(AllOf(HasSubstr("schema_registry.url"), HasSubstr("basic_auth"))));
  for (const auto& problem : with_credentials) EXPECT_THAT(problem, Not(HasSubstr("hunter2-pw")));
  // A query is where a token would be: refused without quoting it.
  const auto with_query = problems_with("schema_registry: {url: 'http://registry/x?apikey=s3cr3t-t0ken'}\n");
  EXPECT_THAT(with_query, Contains(HasSubstr("query or fragment")));
  for (const auto& problem : with_query) EXPECT_THAT(problem, Not(HasSubstr("s3cr3t-t0ken")));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http:///x'}\n"), Contains(HasSubstr("has no host")));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http://r', basic_auth: {user: u}}\n"),
              Contains(AllOf(HasSubstr("schema_registry.basic_auth"), HasSubstr("both"))));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http://r', tls: {ca_file: /etc/hostname}}\n"),
              Contains(AllOf(HasSubstr("schema_registry.tls"), HasSubstr("https://"))));
  EXPECT_THAT(problems_with("schema_registry: {url: 'https://r', tls: {cert_file: /etc/hostname}}\n"),
              Contains(AllOf(HasSubstr("schema_registry.tls.cert_file"), HasSubstr("key"))));
  EXPECT_THAT(problems_with("schema_registry: {basic_auth: {user: u, password: p4ssw0rd}}\n"),
              Contains(HasSubstr("without schema_registry.url")));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http://r', timeout: 0s}\n"),
              Contains(HasSubstr("schema_registry.timeout")));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http://r', cache_max_schemas: 0}\n"),
              Contains(HasSubstr("schema_registry.cache_max_schemas")));
  EXPECT_THAT(problems_with("schema_registry: {url: 'http://r', colour: blue}\n"),
              Contains(HasSubstr("schema_registry.colour")));
}

}  // namespace
}  // namespace hbingest::config
