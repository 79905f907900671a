// The HTTP client against the stack's real registry (Apicurio 2.6, Confluent-compatible API at
// HBINGEST_SCHEMA_REGISTRY): Avro and Protobuf schemas with references registered through the API
// (POST /subjects/{s}/versions, as producers register them), read back by id and by subject/version.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "hbingest/connectors/http_schema_registry.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string registry_url() {
  const char* url = std::getenv("HBINGEST_SCHEMA_REGISTRY");
  if (url == nullptr) throw std::runtime_error("HBINGEST_SCHEMA_REGISTRY is not set: eval \"$(stack/hbstack env)\"");
  return url;
}

std::string unique(const std::string& prefix) {
  std::random_device random;
  return prefix + "-" + std::to_string(random() % 1000000000);
}

// A subject as a URL path segment ('/' included: confluent-kafka names a Protobuf import's subject
// by its path, "common/money.proto").
std::string encode(const std::string& subject) {
  std::string out;
  for (const char c : subject) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

// Registers through the API as a producer does; returns the id the registry gave.
std::int32_t register_schema(const std::string& subject, const nlohmann::json& request) {
  const std::string url = registry_url();
  const std::size_t path_at = url.find('/', url.find("://") + 3);
  httplib::Client client(url.substr(0, path_at));
  client.set_read_timeout(30s);
  const auto result = client.Post(url.substr(path_at) + "/subjects/" + encode(subject) + "/versions", request.dump(),
                                  "application/vnd.schemaregistry.v1+json");
  if (!result) throw std::runtime_error("POST " + subject + ": " + httplib::to_string(result.error()));
  if (result->status != 200) {
    throw std::runtime_error("POST " + subject + ": " + std::to_string(result->status) + " " + result->body);
  }
  return nlohmann::json::parse(result->body).at("id").get<std::int32_t>();
}

std::unique_ptr<SchemaRegistry> client() {
  HttpSchemaRegistryOptions options;
  options.url = registry_url();
  options.timeout = 10s;
  return make_http_schema_registry(options);
}

TEST(SchemaRegistryIntegration, AvroWithAReferenceByIdAndBySubjectVersion) {
  const std::string money_subject = unique("it-avro-money");
  const std::string order_subject = unique("it-avro-order") + "-value";
  const std::string money = R"({"type":"record","name":"Money","namespace":"hbingest.it",)"
                            R"("fields":[{"name":"cents","type":"long"},{"name":"currency","type":"string"}]})";
  const std::string order =
      R"({"type":"record","name":"Order","namespace":"hbingest.it",)"
      R"("fields":[{"name":"order_id","type":"long"},{"name":"total","type":"hbingest.it.Money"}]})";
  const std::int32_t money_id = register_schema(money_subject, {{"schema", money}});
  const std::int32_t order_id = register_schema(
      order_subject, {{"schema", order},
                      {"references", {{{"name", "hbingest.it.Money"}, {"subject", money_subject}, {"version", 1}}}}});

  auto registry = client();
  const RegisteredSchema by_id = registry->schema_by_id(order_id);
  EXPECT_EQ(by_id.id, order_id);
  EXPECT_EQ(by_id.type, SchemaType::avro);
  EXPECT_EQ(nlohmann::json::parse(by_id.text), nlohmann::json::parse(order));
  ASSERT_EQ(by_id.references.size(), 1u);
  EXPECT_EQ(by_id.references[0].name, "hbingest.it.Money");
  EXPECT_EQ(by_id.references[0].subject, money_subject);
  EXPECT_EQ(by_id.references[0].version, 1);

  // The reference, followed as a format resolves it.
  const RegisteredSchema dependency =
      registry->schema_by_subject_version(by_id.references[0].subject, by_id.references[0].version);
  EXPECT_EQ(dependency.id, money_id);
  EXPECT_EQ(dependency.type, SchemaType::avro);
  EXPECT_EQ(nlohmann::json::parse(dependency.text), nlohmann::json::parse(money));

  const RegisteredSchema by_version = registry->schema_by_subject_version(order_subject, 1);
  EXPECT_EQ(by_version.id, order_id);
  EXPECT_EQ(by_version.references.size(), 1u);
}

TEST(SchemaRegistryIntegration, ProtobufWithAnImportByIdAndBySubjectVersion) {
  const std::string money_subject = unique("it-proto") + "/common/money.proto";
  const std::string order_subject = unique("it-proto-order") + "-value";
  const std::string money =
      "syntax = \"proto3\";\npackage hbingest.it;\n\nmessage Money {\n  int64 cents = 1;\n"
      "  string currency = 2;\n}\n";
  const std::string order =
      "syntax = \"proto3\";\npackage hbingest.it;\n\nimport \"common/money.proto\";\n\n"
      "message Order {\n  int64 order_id = 1;\n  Money total = 2;\n}\n";
  const std::int32_t money_id = register_schema(money_subject, {{"schemaType", "PROTOBUF"}, {"schema", money}});
  const std::int32_t order_id = register_schema(
      order_subject, {{"schemaType", "PROTOBUF"},
                      {"schema", order},
                      {"references", {{{"name", "common/money.proto"}, {"subject", money_subject}, {"version", 1}}}}});

  auto registry = client();
  const RegisteredSchema by_id = registry->schema_by_id(order_id);
  EXPECT_EQ(by_id.id, order_id);
  EXPECT_EQ(by_id.type, SchemaType::protobuf);
  // Registered as .proto text, answered as .proto text (what confluent-kafka-python registers,
  // base64 of a FileDescriptorProto, comes back as that: tests/integration/python/schema_peers.py).
  EXPECT_THAT(by_id.text, AllOf(HasSubstr("import \"common/money.proto\""), HasSubstr("message Order")));
  ASSERT_EQ(by_id.references.size(), 1u);
  EXPECT_EQ(by_id.references[0].name, "common/money.proto");
  EXPECT_EQ(by_id.references[0].subject, money_subject);

  const RegisteredSchema dependency = registry->schema_by_subject_version(money_subject, 1);
  EXPECT_EQ(dependency.id, money_id);
  EXPECT_EQ(dependency.type, SchemaType::protobuf);
  EXPECT_THAT(dependency.text, HasSubstr("message Money"));

  const RegisteredSchema by_version = registry->schema_by_subject_version(order_subject, 1);
  EXPECT_EQ(by_version.id, order_id);
  EXPECT_EQ(by_version.type, SchemaType::protobuf);
}

TEST(SchemaRegistryIntegration, TheRealRegistrysNoesAreClassifiedRight) {
  auto registry = client();
  const std::string subject = unique("it-missing");
  EXPECT_THROW(registry->schema_by_id(2'000'000'000), SchemaNotFound);
  EXPECT_THROW(registry->schema_by_subject_version(subject, 1), SchemaNotFound);
  const std::string existing = unique("it-one-version");
  register_schema(existing, {{"schema", R"({"type":"string"})"}});
  EXPECT_THROW(registry->schema_by_subject_version(existing, 7), SchemaNotFound);

  // The registry's root instead of its API: Apicurio's 404 there carries no 4040x code.
  HttpSchemaRegistryOptions wrong;
  wrong.url = registry_url().substr(0, registry_url().find("/apis/"));
  wrong.timeout = 10s;
  try {
    make_http_schema_registry(wrong)->schema_by_id(1);
    ADD_FAILURE() << "a wrong base url answered";
  } catch (const SchemaRegistryUnavailable& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("answered 404"), HasSubstr("is the url the API's base")));
  }
}

// TLS against a local HTTPS server with the stack's certificates (HBINGEST_TLS_DIR: a test CA, a
// server certificate for 127.0.0.1, a client certificate): the CA is checked, and a registry that
// requires a client certificate gets one.
class TlsRegistry {
 public:
  TlsRegistry(const std::string& dir, bool require_client_cert)
      : server_((dir + "/server.pem").c_str(), (dir + "/server.key").c_str(),
                require_client_cert ? (dir + "/ca.pem").c_str() : nullptr) {
    server_.Get("/api/schemas/ids/3", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"schema":"\"string\""})", "application/vnd.schemaregistry.v1+json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~TlsRegistry() {
    server_.stop();
    thread_.join();
  }
  TlsRegistry(const TlsRegistry&) = delete;
  TlsRegistry& operator=(const TlsRegistry&) = delete;
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/api"; }

 private:
  httplib::SSLServer server_;
  int port_ = 0;
  std::thread thread_;
};

std::string tls_dir() {
  const char* dir = std::getenv("HBINGEST_TLS_DIR");
  return dir == nullptr ? "" : dir;
}

TEST(SchemaRegistryTls, TheRegistrysCertificateMustChainToTheConfiguredCa) {
  if (tls_dir().empty()) GTEST_SKIP() << "HBINGEST_TLS_DIR unset: this stack has no certificates (no openssl)";
  TlsRegistry registry(tls_dir(), false);
  HttpSchemaRegistryOptions options;
  options.url = registry.url();
  options.timeout = 5s;
  options.tls_ca_file = tls_dir() + "/ca.pem";
  EXPECT_EQ(make_http_schema_registry(options)->schema_by_id(3).text, R"("string")");

  options.tls_ca_file.clear();  // the system's CAs do not know the stack's test CA
  try {
    make_http_schema_registry(options)->schema_by_id(3);
    ADD_FAILURE() << "a certificate from an unknown CA was accepted";
  } catch (const SchemaRegistryUnavailable& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(registry.url()), HasSubstr("certificate")));
  }
}

TEST(SchemaRegistryTls, AClientCertificateIsSentWhenConfigured) {
  if (tls_dir().empty()) GTEST_SKIP() << "HBINGEST_TLS_DIR unset: this stack has no certificates (no openssl)";
  TlsRegistry registry(tls_dir(), true);
  HttpSchemaRegistryOptions options;
  options.url = registry.url();
  options.timeout = 5s;
  options.tls_ca_file = tls_dir() + "/ca.pem";
  EXPECT_THROW(make_http_schema_registry(options)->schema_by_id(3), SchemaRegistryUnavailable);
  options.tls_cert_file = tls_dir() + "/client.pem";
  options.tls_key_file = tls_dir() + "/client.key";
  EXPECT_EQ(make_http_schema_registry(options)->schema_by_id(3).text, R"("string")");
}

}  // namespace
}  // namespace hbingest::connectors
