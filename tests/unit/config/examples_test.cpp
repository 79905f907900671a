// The shipped examples must load, and docs/configuration.md must carry the current reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hbingest/config/loader.h"

namespace hbingest::config {
namespace {

using namespace std::chrono_literals;
const std::filesystem::path kSourceDir = HBINGEST_SOURCE_DIR;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(Examples, LocalMatchesTheDevStack) {
  const Config c = load_config(kSourceDir / "config/examples/local.yaml");
  EXPECT_EQ(c.kafka.bootstrap_servers, "127.0.0.1:19092");
  EXPECT_EQ(c.hbase.endpoints, std::vector<std::string>{"127.0.0.1:19090"});
  EXPECT_EQ(c.kafka.topics, std::vector<std::string>{"events"});
  ASSERT_EQ(c.routes.size(), 1u);
  EXPECT_EQ(c.routes[0].table, "events");
  EXPECT_EQ(c.routes[0].preset, "events");
  EXPECT_EQ(c.routes[0].event_types, (std::vector<std::string>{"login", "order"}));
}

TEST(Examples, AvroAndProtobufReadTheDevStacksRegistry) {
  for (const auto& [file, format] :
       {std::pair{"avro.yaml", EventFormat::avro}, {"protobuf.yaml", EventFormat::protobuf}}) {
    const Config c = load_config(kSourceDir / "config/examples" / file);
    EXPECT_EQ(c.decode.format, format) << file;
    EXPECT_EQ(c.schema_registry.url, "http://127.0.0.1:18081/apis/ccompat/v7") << file;
    EXPECT_EQ(c.kafka.bootstrap_servers, "127.0.0.1:19092") << file;
  }
}

TEST(Examples, ProductionLoadsWithItsSecrets) {
  // Same layout as /etc/hbingest: the config next to a secrets/ directory.
  const auto dir = std::filesystem::temp_directory_path() / ("hbingest-prod-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "secrets");
  std::filesystem::copy_file(kSourceDir / "config/examples/production.yaml", dir / "config.yaml",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "secrets/kafka-password") << "kafka-pw\n";
  std::ofstream(dir / "secrets/http-token") << "http-token\n";
  std::filesystem::create_directories(dir / "tls");
  std::ofstream(dir / "tls/hbase-ca.crt") << "-----BEGIN CERTIFICATE-----\n";
  ::setenv("KAFKA_BOOTSTRAP", "k0:9093,k1:9093", 1);
  ::setenv("KAFKA_USERNAME", "ingest", 1);

  const Config c = load_config(dir / "config.yaml");
  EXPECT_EQ(c.kafka.bootstrap_servers, "k0:9093,k1:9093");
  EXPECT_EQ(c.kafka.properties.at("sasl.password"), "kafka-pw");
  EXPECT_EQ(c.kafka.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(c.http.bearer_token, "http-token");
  EXPECT_EQ(c.hbase.endpoints.size(), 3u);
  EXPECT_EQ(c.hbase.protocol, ThriftProtocol::compact);
  EXPECT_TRUE(c.hbase.tls.enabled);
  EXPECT_EQ(c.hbase.tls.ca_file, dir / "tls/hbase-ca.crt");
  EXPECT_EQ(c.writer.batch_max_bytes, 4u << 20);
  EXPECT_EQ(c.logging.format, LogFormat::json);
  const std::string effective = effective_config_yaml(c);
  EXPECT_EQ(effective.find("kafka-pw"), std::string::npos);
  EXPECT_EQ(effective.find("http-token"), std::string::npos);

  // Without the secrets every missing one is reported, with its line.
  std::filesystem::remove(dir / "secrets/kafka-password");
  ::unsetenv("KAFKA_USERNAME");
  const auto problems = try_load_config(dir / "config.yaml").problems;
  EXPECT_THAT(problems, ::testing::Contains(::testing::HasSubstr("kafka.properties.sasl.password: cannot read file")));
  EXPECT_THAT(problems, ::testing::Contains(::testing::HasSubstr("'KAFKA_USERNAME' is not set")));
  std::filesystem::remove_all(dir);
}

TEST(Examples, TlsLoadsWithTheStackVariables) {
  const auto dir = std::filesystem::temp_directory_path() / ("hbingest-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  ::setenv("HBINGEST_TLS_DIR", dir.c_str(), 1);
  ::setenv("HBINGEST_KAFKA_SASL_SSL", "127.0.0.1:19097", 1);
  ::setenv("HBINGEST_KAFKA_SASL_USER", "hbingest", 1);
  ::setenv("HBINGEST_KAFKA_SASL_PASSWORD", "scram-pw", 1);
  ::setenv("HBINGEST_THRIFT2_TLS", "127.0.0.1:19098", 1);
  const Config c = load_config(kSourceDir / "config/examples/tls.yaml");
  EXPECT_EQ(c.kafka.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(c.kafka.properties.at("ssl.ca.location"), (dir / "ca.pem").string());
  EXPECT_TRUE(c.hbase.tls.enabled);
  EXPECT_EQ(c.hbase.tls.ca_file, dir / "ca.pem");
  EXPECT_EQ(c.hbase.endpoints, std::vector<std::string>{"127.0.0.1:19098"});
  EXPECT_EQ(effective_config_yaml(c).find("scram-pw"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// kerberos.yaml: hbase.sasl GSSAPI at QOP privacy and Kafka GSSAPI from one keytab, with the
// variables `HBSTACK_KERBEROS=1 stack/hbstack env` sets.
TEST(Examples, KerberosLoadsWithTheStackVariables) {
  const auto dir = std::filesystem::temp_directory_path() / ("hbingest-krb-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "hbingest.keytab") << "keytab";
  ::setenv("HBSTACK_KEYTAB_DIR", dir.c_str(), 1);
  ::setenv("HBSTACK_REALM", "HBSTACK.TEST", 1);
  ::setenv("HBINGEST_KAFKA_GSSAPI", "localhost:19088", 1);
  ::setenv("HBINGEST_THRIFT2_KRB", "127.0.0.1:19190", 1);
  const Config c = load_config(kSourceDir / "config/examples/kerberos.yaml");
  EXPECT_EQ(c.hbase.sasl.mechanism, SaslMechanism::gssapi);
  EXPECT_EQ(c.hbase.sasl.qop, SaslQop::privacy);
  EXPECT_EQ(c.hbase.sasl.principal, "hbingest@HBSTACK.TEST");
  EXPECT_EQ(c.hbase.sasl.keytab, dir / "hbingest.keytab");
  EXPECT_EQ(c.hbase.sasl.server_principal_host, "localhost");
  EXPECT_EQ(c.hbase.transport, ThriftTransport::buffered);
  EXPECT_EQ(c.kafka.properties.at("sasl.mechanisms"), "GSSAPI");
  EXPECT_EQ(c.kafka.properties.at("sasl.kerberos.keytab"), (dir / "hbingest.keytab").string());
  EXPECT_EQ(c.kafka.properties.at("sasl.kerberos.principal"), "hbingest@HBSTACK.TEST");
  std::filesystem::remove_all(dir);
}

// The row design examples (docs/rows.md): each loads as the config it says it is.
// tests/unit/app/check_config_command_test.cpp also builds their routes, as check-config does.
TEST(Examples, RowDesignExamplesLoad) {
  const auto load = [](const char* file) { return load_config(kSourceDir / "config/examples" / file); };
  const Config typed = load("rows_typed.yaml");
  ASSERT_EQ(typed.routes.size(), 1u);
  ASSERT_TRUE(typed.routes[0].columns);
  EXPECT_EQ(typed.routes[0].columns->size(), 8u);
  EXPECT_EQ(typed.routes[0].null_fields, NullFields::delete_cell);
  EXPECT_EQ(typed.decode.key_format, KeyFormat::json);

  const Config templates = load("rows_templates.yaml");
  ASSERT_EQ(templates.routes.size(), 4u);
  EXPECT_EQ(templates.routes[2].table, "orders_${field:region}");
  EXPECT_EQ(templates.routes[2].table_values.at("field:region").values, (std::vector<std::string>{"eu", "us", "ap"}));
  EXPECT_EQ(templates.routes[3].table_values.at("field:header:tenant").pattern, "[a-z][a-z0-9]{1,15}");

  const Config upserts = load("order_status_upserts.yaml");
  ASSERT_EQ(upserts.routes.size(), 1u);
  EXPECT_EQ(upserts.routes[0].on_tombstone, OnTombstone::delete_row);

  const Config packed = load("rows_packed.yaml");
  ASSERT_EQ(packed.routes.size(), 1u);
  EXPECT_EQ(packed.routes[0].format, "avro");
  ASSERT_TRUE(packed.routes[0].columns);
  EXPECT_EQ(packed.routes[0].columns->front().from, "kafka:value");

  const Config seeds = load("rows_seeds.yaml");
  EXPECT_EQ(seeds.routes.size(), 9u);
}

TEST(Examples, EveryOptionIsInTheExamples) {
  // Each documented key appears in production.yaml, so the example really lists every option.
  const std::string production = read(kSourceDir / "config/examples/production.yaml");
  const std::string local = read(kSourceDir / "config/examples/local.yaml");
  const std::string reference = configuration_reference_markdown();
  std::size_t checked = 0;
  for (std::size_t pos = reference.find("\n| `"); pos != std::string::npos; pos = reference.find("\n| `", pos + 1)) {
    ++pos;  // the first column only
    const std::size_t end = reference.find('`', pos + 3);
    std::string key = reference.substr(pos + 3, end - pos - 3);
    key = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    if (key == "key" || key == "key_file" || key == "bearer_token" || key == "token_env" || key == "default_route") {
      EXPECT_NE(local.find(key), std::string::npos) << key << " (alternatives are shown commented in local.yaml)";
    } else {
      EXPECT_NE(production.find(key + ":"), std::string::npos) << key;
    }
    ++checked;
  }
  EXPECT_GT(checked, 60u);
}

TEST(Docs, ConfigurationReferenceIsCurrent) {
  const std::string doc = read(kSourceDir / "docs/configuration.md");
  EXPECT_NE(doc.find(configuration_reference_markdown()), std::string::npos)
      << "docs/configuration.md is stale: regenerate its reference section with hbingest_config_reference";
}

}  // namespace
}  // namespace hbingest::config
