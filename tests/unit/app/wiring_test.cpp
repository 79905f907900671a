// Config → options: what the daemon's metrics and pipeline take from the configuration.

#include "hbingest/app/wiring.h"

#include <gtest/gtest.h>

#include <limits>

#include <cstdlib>

#include "hbingest/app/kerberos_logins.h"
#include "hbingest/app/query_service.h"
#include "hbingest/config/loader.h"
#include "hbingest/server/http_server.h"

namespace hbingest::app {
namespace {

config::Config two_routes(std::vector<std::string> topics) {
  config::Config config;
  config.kafka.topics = std::move(topics);
  config::RouteConfig logins;
  logins.event_types = {"login", "logout"};
  logins.table = "sessions";
  config::RouteConfig orders;
  orders.event_types = {"order"};
  orders.table = "orders";
  config.routes = {logins, orders};
  config.default_route = config::RouteConfig{};  // serves other types, names none
  return config;
}

TEST(Wiring, MetricLabelsAreTheRoutesEventTypesAndTheLiteralTopics) {
  const auto labels = metric_labels(two_routes({"events", "audit"}));
  EXPECT_EQ(labels.event_types, (std::set<std::string, std::less<>>{"login", "logout", "order"}));
  EXPECT_EQ(labels.topics, (std::set<std::string, std::less<>>{"audit", "events"}));
}

TEST(Wiring, RegexSubscriptionNamesNoTopic) { EXPECT_TRUE(metric_labels(two_routes({"^events-.*"})).topics.empty()); }

TEST(Wiring, PipelineTakesTheFutureSkewBound) {
  auto config = two_routes({"events"});
  config.decode.max_future_skew = std::chrono::minutes(5);
  EXPECT_EQ(pipeline_options(config).decode.max_future_skew, std::chrono::minutes(5));
}

TEST(Wiring, TheKafkaReadAheadIsCountedInsideTheInflightBytes) {
  auto config = two_routes({"events"});
  config.writer.max_inflight_bytes = 32 * 1024 * 1024;
  // An eighth of the budget by default; the events keep the rest.
  EXPECT_EQ(kafka_read_ahead_bytes(config), 4u * 1024 * 1024);
  EXPECT_EQ(pipeline_options(config).flow.max_inflight_bytes, 28u * 1024 * 1024);
  // Between 1 MiB and 64 MiB, and never more than half a small budget.
  config.writer.max_inflight_bytes = 4ull * 1024 * 1024 * 1024;
  EXPECT_EQ(kafka_read_ahead_bytes(config), 64u * 1024 * 1024);
  config.writer.max_inflight_bytes = 1024 * 1024;
  EXPECT_EQ(kafka_read_ahead_bytes(config), 512u * 1024);
  // kafka.properties' own value is the one counted (check-config refuses more than half).
  config.writer.max_inflight_bytes = 8 * 1024 * 1024;
  config.kafka.properties["queued.max.messages.kbytes"] = "2048";
  EXPECT_EQ(kafka_read_ahead_bytes(config), 2u * 1024 * 1024);
  EXPECT_EQ(pipeline_options(config).flow.max_inflight_bytes, 6u * 1024 * 1024);
}

TEST(Wiring, AutoRowBoundsLeaveTheDerivedOnesUncappedAndNumbersCapThem) {
  auto config = two_routes({"events"});
  EXPECT_EQ(pipeline_options(config).flow.max_inflight_rows, std::numeric_limits<std::size_t>::max());
  config.writer.max_inflight_rows = 30000;
  config.writer.max_inflight_rows_per_partition = 7000;
  EXPECT_EQ(pipeline_options(config).flow.max_inflight_rows, 30000u);
  EXPECT_EQ(pipeline_options(config).flow.max_inflight_rows_per_partition, 7000u);
}

TEST(Wiring, WritersTakeTheGatewaysFrameLimit) {
  config::HBaseConfig hbase;
  hbase.transport = config::ThriftTransport::framed;
  hbase.framed_max_frame_bytes = 8 * 1024 * 1024;
  const auto options = thrift2_options(hbase);
  EXPECT_EQ(options.transport, connectors::ThriftTransportKind::framed);
  EXPECT_EQ(options.max_frame_bytes, 8u * 1024 * 1024);
}

TEST(Wiring, SaslOptionsFollowHBaseSasl) {
  config::HBaseConfig hbase;
  EXPECT_FALSE(thrift2_options(hbase).sasl.enabled) << "off by default";
  hbase.sasl.mechanism = config::SaslMechanism::gssapi;
  hbase.sasl.principal = "hbingest@EXAMPLE.COM";
  hbase.sasl.qop = config::SaslQop::integrity;
  auto options = thrift2_options(hbase);
  EXPECT_TRUE(options.sasl.enabled);
  EXPECT_EQ(options.sasl.service, "hbase");
  EXPECT_EQ(options.sasl.server_host, "") << "_HOST: each endpoint's host as written";
  EXPECT_EQ(options.sasl.qop, connectors::SaslQop::integrity);
  EXPECT_EQ(options.sasl.principal, "hbingest@EXAMPLE.COM");
  EXPECT_EQ(options.sasl.ccache, "MEMORY:hbingest-hbase") << "the cache KerberosLogins keeps, never the default";
  hbase.sasl.server_principal_host = "gateway.example.com";
  hbase.sasl.qop = config::SaslQop::authentication;
  options = thrift2_options(hbase);
  EXPECT_EQ(options.sasl.server_host, "gateway.example.com");
  EXPECT_EQ(options.sasl.qop, connectors::SaslQop::authentication);
  hbase.sasl.qop = config::SaslQop::privacy;
  EXPECT_EQ(thrift2_options(hbase).sasl.qop, connectors::SaslQop::privacy);
}

TEST(Wiring, KafkaGssapiTurnsLibrdkafkasKinitOffOnConsumerAndDeadLetterProducer) {
  auto config = two_routes({"events"});
  config.kafka.properties = {{"security.protocol", "SASL_PLAINTEXT"},
                             {"sasl.mechanism", "gssapi"},
                             {"sasl.kerberos.keytab", "/etc/hbingest/kafka.keytab"},
                             {"sasl.kerberos.principal", "hbingest@EXAMPLE.COM"}};
  EXPECT_EQ(kafka_source_options(config.kafka).properties.at("sasl.kerberos.min.time.before.relogin"), "0");
  EXPECT_EQ(dead_letter_options(config).producer.properties.at("sasl.kerberos.min.time.before.relogin"), "0");
  const auto login = kafka_login_options(config.kafka);
  ASSERT_TRUE(login);
  EXPECT_EQ(login->link, "kafka");
  EXPECT_EQ(login->principal, "hbingest@EXAMPLE.COM");
  EXPECT_EQ(login->keytab, "/etc/hbingest/kafka.keytab");
  EXPECT_EQ(login->ccache, "MEMORY:hbingest-kafka");

  config.kafka.properties.erase("sasl.kerberos.principal");
  EXPECT_EQ(kafka_login_options(config.kafka)->principal, "kafkaclient") << "librdkafka's default";
  config.kafka.properties.erase("sasl.kerberos.keytab");
  EXPECT_THROW(kafka_login_options(config.kafka), std::invalid_argument);

  config.kafka.properties = {{"sasl.mechanism", "SCRAM-SHA-512"}};
  EXPECT_FALSE(kafka_login_options(config.kafka));
  EXPECT_FALSE(kafka_source_options(config.kafka).properties.contains("sasl.kerberos.min.time.before.relogin"));
}

TEST(Wiring, NoGssapiNoLoginNoThread) {
  const auto config = two_routes({"events"});
  const KerberosLogins logins(config, KerberosLinks{});
  EXPECT_TRUE(logins.empty());
  EXPECT_TRUE(logins.not_ready_reasons().empty());
}

TEST(Wiring, KerberosMetricsShowEachLinksTicketEndAndFailures) {
  kerberos::KeeperStatus hbase;
  hbase.link = "hbase";
  hbase.valid_until = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  hbase.failures = 3;
  kerberos::KeeperStatus kafka;
  kafka.link = "kafka";
  const KerberosMetrics metrics([&] { return std::vector<kerberos::KeeperStatus>{hbase, kafka}; });
  const auto families = metrics.Collect();
  ASSERT_EQ(families.size(), 2U);
  EXPECT_EQ(families[0].name, "hbingest_kerberos_ticket_valid_until_seconds");
  ASSERT_EQ(families[0].metric.size(), 2U);
  EXPECT_EQ(families[0].metric[0].label.at(0).value, "hbase");
  EXPECT_EQ(families[0].metric[0].gauge.value, 1'800'000'000.0);
  EXPECT_EQ(families[0].metric[1].gauge.value, 0.0) << "no ticket yet";
  EXPECT_EQ(families[1].name, "hbingest_kerberos_login_failures_total");
  EXPECT_EQ(families[1].metric[0].counter.value, 3.0);
}

TEST(Wiring, TheQueryPortTakesThePerClientCapAndTheHealthPortKeepsAWorkerForOthers) {
  const auto config = config::load_config_text(
      "kafka: {bootstrap_servers: \"b:9092\", topics: [events]}\nhbase: {endpoints: [\"h:9090\"]}\n"
      "http: {workers: 10, max_connections_per_client: 3, health_listen: \"127.0.0.1:0\"}\n"
      "routes:\n  - {event_types: [login], table: events, preset: events}\n",
      "test.yaml");
  EXPECT_EQ(http_server_options(config.http, nullptr).max_connections_per_client, 3);
  const auto health = health_server_options(config.http, nullptr);
  EXPECT_EQ(health.max_connections_per_client, health.workers - 1);
  EXPECT_EQ(config::load_config_text("kafka: {bootstrap_servers: \"b:9092\", topics: [events]}\nhbase: {endpoints: "
                                     "[\"h:9090\"]}\nroutes:\n  - {event_types: [login], table: events, preset: "
                                     "events}\n",
                                     "test.yaml")
                .http.max_connections_per_client,
            0)
      << "0: server::default_connections_per_client(workers)";
  EXPECT_EQ(server::default_connections_per_client(16), 8);
  EXPECT_EQ(server::default_connections_per_client(1), 1);
}

TEST(Wiring, TableWatchChecksTheDecodeFamilyAtTheConfiguredInterval) {
  auto config = two_routes({"events"});
  config.decode.family = "f";
  config.table.check_interval = std::chrono::seconds(45);
  const auto options = table_watch_options(config);
  EXPECT_EQ(options.families, std::vector<std::string>{"f"});
  EXPECT_EQ(options.interval, std::chrono::seconds(45));
  EXPECT_LE(options.recheck, options.interval);
  EXPECT_FALSE(options.create) << "without table.create_table the watch creates nothing";
}

TEST(Wiring, UnderCreateTableTheWatchCreatesRunTimeTablesWithTheTableSettings) {
  auto config = two_routes({"events"});
  config.table.create_table = true;
  config.table.ttl = std::chrono::hours(2);
  config.table.bloom_filter = "ROWCOL";
  config.table.compression = "GZ";
  const auto options = table_watch_options(config);
  ASSERT_TRUE(options.create);
  EXPECT_EQ(options.create->ttl, std::chrono::hours(2));
  EXPECT_EQ(options.create->bloom_filter, "ROWCOL");
  EXPECT_EQ(options.create->compression, "GZ");
}

TEST(Wiring, TheSchemaRegistryClientTakesItsSection) {
  ::setenv("HBINGEST_TEST_WIRING_REGISTRY_PW", "wiring-registry-pw", 1);
  const auto config = config::load_config_text(
      "kafka: {bootstrap_servers: \"b:9092\", topics: [events]}\nhbase: {endpoints: [\"h:9090\"]}\n"
      "decode: {format: avro}\n"
      "schema_registry: {url: \"http://127.0.0.1:18081/apis/ccompat/v7\", timeout: 750ms,\n"
      "  basic_auth: {user: ingest, password: \"${HBINGEST_TEST_WIRING_REGISTRY_PW}\"}}\n"
      "routes:\n  - {event_types: [login], table: events, preset: events}\n",
      "test.yaml");
  const auto options = schema_registry_options(config.schema_registry);
  EXPECT_EQ(options.url, "http://127.0.0.1:18081/apis/ccompat/v7");
  EXPECT_EQ(options.basic_auth_user, "ingest");
  EXPECT_EQ(options.basic_auth_password, "wiring-registry-pw");
  EXPECT_EQ(options.timeout, std::chrono::milliseconds(750));
  EXPECT_EQ(connectors::make_http_schema_registry(options)->describe(), "http://127.0.0.1:18081/apis/ccompat/v7");
}

}  // namespace
}  // namespace hbingest::app
