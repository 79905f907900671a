#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "hbingest/config/loader.h"

namespace hbingest::config {
namespace {

using namespace std::chrono_literals;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr const char* kMinimal = R"(kafka:
  bootstrap_servers: 127.0.0.1:19092
  topics: [events]
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - event_types: [login, order]
    table: events
    preset: events
)";

std::vector<std::string> problems_of(std::string_view yaml) { return try_load_config_text(yaml, "test.yaml").problems; }

// A problem that names `needle` at line `line`.
::testing::Matcher<std::string> problem_at(int line, const std::string& needle) {
  return AllOf(HasSubstr("test.yaml:" + std::to_string(line) + ":"), HasSubstr(needle));
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("hbingest-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

TEST(Loader, MinimalConfigGetsDefaults) {
  const Config c = load_config_text(kMinimal, "test.yaml");
  EXPECT_EQ(c.kafka.bootstrap_servers, "127.0.0.1:19092");
  EXPECT_EQ(c.kafka.topics, std::vector<std::string>{"events"});
  EXPECT_EQ(c.kafka.group_id, "hbingest");
  EXPECT_EQ(c.hbase.endpoints, std::vector<std::string>{"127.0.0.1:19090"});
  EXPECT_EQ(c.writer.batch_max_bytes, 2u * 1024 * 1024);
  EXPECT_EQ(c.table.ttl, 600000ms);
  EXPECT_EQ(c.dlq.max_letter_bytes, 900u * 1024) << "below a broker's default message.max.bytes (1 MB)";
  ASSERT_THAT(c.routes, SizeIs(1));
  EXPECT_EQ(c.routes[0].preset, "events");
  EXPECT_EQ(c.routes[0].key_source, "test.yaml:9");
  EXPECT_EQ(c.routes[0].event_types, (std::vector<std::string>{"login", "order"}));
  EXPECT_FALSE(c.default_route);
}

TEST(Loader, ReadsEveryType) {
  const std::string yaml = std::string(kMinimal) + R"(writer:
  writers: 8
  batch_max_bytes: 4MiB
  linger: 20ms
  durability: ASYNC_WAL
decode:
  time_format: epoch_s
  columns: both
  kafka_time_fallback: false
  ttl_field: ttl_ms
hbase_extra_is_not_here: 1
)";
  auto result = try_load_config_text(yaml, "test.yaml");
  EXPECT_THAT(result.problems, ElementsAre(problem_at(20, "hbase_extra_is_not_here: unknown key")));
  const Config& c = result.config;
  EXPECT_EQ(c.writer.writers, 8);
  EXPECT_EQ(c.writer.batch_max_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(c.writer.linger, 20ms);
  EXPECT_EQ(c.writer.durability, "ASYNC_WAL");
  EXPECT_EQ(c.decode.time_format, TimeFormat::epoch_s);
  EXPECT_EQ(c.decode.columns, ColumnsMode::both);
  EXPECT_FALSE(c.decode.kafka_time_fallback);
  EXPECT_EQ(c.decode.ttl_field, "ttl_ms");
}

TEST(Loader, ReportsEveryProblemAtOnceWithLocations) {
  const auto problems = problems_of(R"(kafka:
  bootstrap_server: 127.0.0.1:19092
  topics: [events]
  commit_interval: 5
hbase:
  endpoints: [nohost]
  namespce: x
writer:
  writers: 0
  batch_max_rows: many
  linger: [1s]
  durability: async_wal
decode:
  columns: cells
routes:
  - event_types: [login]
    table: events
    preset: events
)");
  EXPECT_THAT(problems,
              Contains(problem_at(2, "kafka.bootstrap_server: unknown key (did you mean 'bootstrap_servers'?)")));
  EXPECT_THAT(problems, Contains(problem_at(2, "kafka.bootstrap_servers: missing required key")));
  EXPECT_THAT(problems, Contains(problem_at(4, "kafka.commit_interval: invalid duration '5': missing unit")));
  EXPECT_THAT(problems, Contains(problem_at(6, "hbase.endpoints[0]: 'nohost' is not host:port")));
  EXPECT_THAT(problems, Contains(problem_at(7, "hbase.namespce: unknown key (did you mean 'namespace'?)")));
  EXPECT_THAT(problems, Contains(problem_at(9, "writer.writers: must be between 1 and 256, got 0")));
  EXPECT_THAT(problems, Contains(problem_at(10, "writer.batch_max_rows: expected an integer, got 'many'")));
  EXPECT_THAT(problems, Contains(problem_at(11, "writer.linger: expected a duration, got a sequence")));
  EXPECT_THAT(problems, Contains(problem_at(12, "writer.durability: 'async_wal' is not one of")));
  EXPECT_THAT(problems, Contains(HasSubstr("(did you mean 'ASYNC_WAL'?)")));
  EXPECT_THAT(problems, Contains(problem_at(14, "decode.columns: 'cells' is not one of fields, raw, both")));
  EXPECT_THAT(problems, SizeIs(10));
  try {
    load_config_text("kafka: {}\n", "test.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_GE(e.problems().size(), 3u);
    EXPECT_THAT(e.what(), HasSubstr("problems in config"));
    for (const auto& p : e.problems()) EXPECT_THAT(p, HasSubstr("test.yaml:")) << p;
  }
}

TEST(Loader, MissingSectionsAndEmptyFile) {
  EXPECT_THAT(problems_of(""), ElementsAre(HasSubstr("the config is empty")));
  const auto problems = problems_of("logging: {level: info}\n");
  EXPECT_THAT(problems, Contains(problem_at(1, "kafka: missing required key")));
  EXPECT_THAT(problems, Contains(problem_at(1, "hbase: missing required key")));
  EXPECT_THAT(problems, Contains(HasSubstr("routes: no routes")));
  EXPECT_THAT(problems_of("- a\n- b\n"), ElementsAre(HasSubstr("expected a mapping, got a sequence")));
}

TEST(Loader, MalformedYamlNamesLineAndColumn) {
  const auto problems = problems_of("kafka:\n  topics: [a, b\nhbase: {}\n");
  ASSERT_THAT(problems, SizeIs(1));
  EXPECT_THAT(problems[0], AllOf(HasSubstr("test.yaml:"), HasSubstr("malformed YAML")));
}

TEST(Loader, ContentAfterTheDocumentIsRejectedWithItsLineAndColumn) {
  // yaml-cpp ends a flow document at its closing brace and reads what follows as another document;
  // YAML::Load used to return the first and drop the rest, so this loaded (and reloaded) as "ok".
  const std::string json = R"({"kafka": {"bootstrap_servers": "b:9092", "topics": ["events"]},
 "hbase": {"endpoints": ["h:9090"]},
 "routes": [{"event_types": ["login"], "table": "events", "preset": "events"}]})";
  EXPECT_THAT(problems_of(json), IsEmpty());
  EXPECT_THAT(problems_of(json + " junk\n"),
              ElementsAre(AllOf(HasSubstr("test.yaml:3:81: "), HasSubstr("content after the end of the config"))));
  EXPECT_THAT(problems_of(json + "\n}\n"), ElementsAre(HasSubstr("test.yaml:4:1: malformed YAML")));
  EXPECT_THAT(problems_of(json + "\nlogging: {level: debug}\n"),
              ElementsAre(AllOf(HasSubstr("test.yaml:4:1: "), HasSubstr("content after the end of the config"))));
  EXPECT_THAT(problems_of(std::string(kMinimal) + "---\nlogging: {level: debug}\n"),
              ElementsAre(AllOf(HasSubstr("test.yaml:11:1: "), HasSubstr("content after the end of the config"))));
  // An explicit start or end marker around the one document is fine.
  EXPECT_THAT(problems_of("---\n" + std::string(kMinimal) + "...\n"), IsEmpty());
}

TEST(Loader, OnlyARegularFileIsReadAsTheConfig) {
  TempDir dir;
  const auto fifo = dir.path() / "config.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO nobody writes to used to block the loader in open(): at a SIGHUP reload, the signal
  // thread, and with it every later SIGTERM.
  auto pending = std::async(std::launch::async, [&] { return try_load_config(fifo); });
  if (pending.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    ADD_FAILURE() << "loading a FIFO blocked";
    ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));  // a writer that writes nothing: the read ends
  }
  EXPECT_THAT(pending.get().problems,
              ElementsAre(fifo.string() + ": the config must be a regular file, this is a FIFO; nothing was read"));
  EXPECT_THAT(try_load_config(dir.path()).problems, ElementsAre(HasSubstr("this is a directory")));
  EXPECT_THAT(
      try_load_config("/dev/null").problems,
      ElementsAre("/dev/null: the config must be a regular file, this is a character device; nothing was read"));
  // A symlink to a regular file (a Kubernetes ConfigMap mount) is read.
  const auto real = dir.write("real.yaml", kMinimal);
  std::filesystem::create_symlink(real, dir.path() / "link.yaml");
  EXPECT_THAT(try_load_config(dir.path() / "link.yaml").problems, IsEmpty());
}

// A regular file is not small for being regular: a config path pointing at a large file (a log, a
// sparse or growing file, /proc/kcore) was read whole, at every SIGHUP too; a 3 GiB sparse file took
// serve past 2.5 GiB before it was stopped. A config larger than any config is refused unread.
TEST(Loader, AConfigFileLargerThanAnyConfigIsRefusedUnread) {
  TempDir dir;
  const auto big = dir.path() / "big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    out << kMinimal;
  }
  // Sparse: its size, not its bytes, is what the loader must refuse.
  std::filesystem::resize_file(big, 64 * 1024 * 1024);
  EXPECT_THAT(try_load_config(big).problems,
              ElementsAre(AllOf(HasSubstr(big.string() + ": the config file is larger than"), HasSubstr("MiB"))));
}

TEST(Loader, DuplicateKeysRejected) {
  const std::string yaml = std::string(kMinimal) + "logging:\n  level: info\n  level: debug\n";
  EXPECT_THAT(problems_of(yaml), ElementsAre(problem_at(12, "logging.level: duplicate key")));
}

TEST(Loader, EnvAndFileSubstitution) {
  TempDir dir;
  dir.write("secrets/password", "s3cret\n");
  ::setenv("HBINGEST_TEST_BROKER", "broker-1:9093", 1);
  ::unsetenv("HBINGEST_TEST_MISSING");
  const std::string yaml = R"(kafka:
  bootstrap_servers: ${HBINGEST_TEST_BROKER}
  topics: [events]
  properties:
    sasl.password: ${file:secrets/password}
    sasl.username: user-$${literal}
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - {event_types: [login], table: events, preset: events}
)";
  const auto file = dir.write("config.yaml", yaml);
  const Config c = load_config(file);
  EXPECT_EQ(c.source, file);
  EXPECT_EQ(c.kafka.bootstrap_servers, "broker-1:9093");
  EXPECT_EQ(c.kafka.properties.at("sasl.password"), "s3cret");
  EXPECT_EQ(c.kafka.properties.at("sasl.username"), "user-${literal}");

  const auto bad = dir.write("bad.yaml", R"(kafka:
  bootstrap_servers: ${HBINGEST_TEST_MISSING}
  topics: [events]
  properties:
    sasl.password: ${file:secrets/nope}
    ssl.key.password: ${unterminated
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - {event_types: [login], table: events, preset: events}
)");
  const auto problems = try_load_config(bad).problems;
  const std::string source = bad.string();
  EXPECT_THAT(problems, Contains(AllOf(HasSubstr(source + ":2:22: kafka.bootstrap_servers"),
                                       HasSubstr("environment variable 'HBINGEST_TEST_MISSING' is not set"))));
  EXPECT_THAT(problems, Contains(AllOf(HasSubstr(source + ":5:20: kafka.properties.sasl.password"),
                                       HasSubstr("cannot read file"), HasSubstr("secrets/nope"))));
  EXPECT_THAT(problems, Contains(AllOf(HasSubstr(source + ":6:"), HasSubstr("unterminated '${'"))));
  EXPECT_THAT(try_load_config(dir.path() / "absent.yaml").problems,
              ElementsAre(HasSubstr("cannot read the config file")));
}

TEST(Loader, FileSubstitutionReadsOnlySmallRegularFiles) {
  // ${file:/dev/zero} used to read until memory ran out, ${file:/dev/stdin} or a FIFO to block.
  TempDir dir;
  dir.write("big", std::string(65 * 1024, 'x'));
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto config_with = [&](const std::string& reference) {
    return dir.write("c.yaml",
                     "kafka:\n  bootstrap_servers: b:9092\n  topics: [events]\n  properties:\n"
                     "    sasl.password: " +
                         reference +
                         "\nhbase: {endpoints: [\"h:9090\"]}\nroutes:\n"
                         "  - {event_types: [login], table: events, preset: events}\n");
  };
  for (const std::string reference : {"${file:/dev/zero}", "${file:fifo}", "${file:big}"}) {
    const auto problems = try_load_config(config_with(reference)).problems;
    EXPECT_THAT(problems, Contains(AllOf(HasSubstr(":5:20: kafka.properties.sasl.password"),
                                         AnyOf(HasSubstr("is not a regular file"), HasSubstr("larger than 64 KiB")))))
        << reference;
  }
}

TEST(Loader, BearerTokenOnlyFromSecretSources) {
  TempDir dir;
  dir.write("token", "tok-from-file\n");
  ::setenv("HBINGEST_TEST_TOKEN", "tok-from-env", 1);
  const auto load = [&](const std::string& http) {
    const auto file = dir.write("c.yaml", std::string(kMinimal) + "http:\n" + http);
    return try_load_config(file);
  };
  EXPECT_EQ(load("  bearer_token: ${HBINGEST_TEST_TOKEN}\n").config.http.bearer_token, "tok-from-env");
  EXPECT_EQ(load("  token_env: HBINGEST_TEST_TOKEN\n").config.http.bearer_token, "tok-from-env");
  EXPECT_EQ(load("  token_file: token\n").config.http.bearer_token, "tok-from-file");
  EXPECT_THAT(load("  bearer_token: hunter2\n").problems,
              ElementsAre(HasSubstr("http.bearer_token: a literal token in the config file is not allowed")));
  EXPECT_THAT(load("  token_file: token\n  token_env: HBINGEST_TEST_TOKEN\n").problems,
              ElementsAre(HasSubstr("set only one of bearer_token, token_file, token_env")));
  EXPECT_THAT(load("  token_env: HBINGEST_TEST_NO_SUCH_VAR\n").problems,
              ElementsAre(HasSubstr("'HBINGEST_TEST_NO_SUCH_VAR' is not set")));
}

TEST(Loader, ANetworkListenerNeedsATokenOrAnExplicitOptOut) {
  TempDir dir;
  dir.write("token", "tok\n");
  const auto load = [&](const std::string& http) {
    return try_load_config(dir.write("c.yaml", std::string(kMinimal) + "http:\n" + http)).problems;
  };
  EXPECT_THAT(load("  listen: 0.0.0.0:8080\n"),
              ElementsAre(AllOf(HasSubstr("http.listen: '0.0.0.0:8080' is reachable from the network"),
                                HasSubstr("http.allow_unauthenticated: true"))));
  EXPECT_THAT(load("  listen: \"[::]:8080\"\n"), ElementsAre(HasSubstr("http.allow_unauthenticated")));
  EXPECT_THAT(load("  listen: 0.0.0.0:8080\n  token_file: token\n"), IsEmpty());
  EXPECT_THAT(load("  listen: 0.0.0.0:8080\n  allow_unauthenticated: true\n"), IsEmpty());
  EXPECT_THAT(load("  listen: 127.0.0.1:8080\n"), IsEmpty());
  EXPECT_THAT(load("  enabled: false\n  listen: 0.0.0.0:8080\n"), IsEmpty());
  EXPECT_THAT(load("  metrics_auth: true\n"), ElementsAre(HasSubstr("http.metrics_auth: is true but no bearer token")));
  EXPECT_THAT(load("  tls_cert_file: c.pem\n"),
              ElementsAre(HasSubstr("set both http.tls_cert_file and http.tls_key_file")));
}

TEST(Loader, KafkaPropertiesManagedByUsAreRejected) {
  const std::string yaml = R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  properties:
    enable.auto.commit: "true"
    enable.auto.offset.store: "true"
    group.id: other
    fetch.max.bytes: "1048576"
hbase:
  endpoints: [h:9090]
routes:
  - {event_types: [login], table: events, preset: events}
)";
  const auto problems = problems_of(yaml);
  EXPECT_THAT(problems, Contains(problem_at(5, "kafka.properties.enable.auto.commit: hbingest manages commits")));
  EXPECT_THAT(problems, Contains(problem_at(6, "kafka.properties.enable.auto.offset.store: hbingest manages commits")));
  EXPECT_THAT(problems, Contains(problem_at(7, "set kafka.group_id instead")));
  EXPECT_THAT(problems, SizeIs(3));
}

TEST(Loader, RouteRules) {
  const auto problems = problems_of(R"(kafka: {bootstrap_servers: "b:9092", topics: [events]}
hbase: {endpoints: ["h:9090"]}
routes:
  - event_types: [login]
    table: events
  - event_types: [order, login]
    table: events
    preset: events
    key_file: spec.yaml
  - table: other
    key: {components: []}
  - event_types: [pay]
    preset: events
    preset_params: {buckets: "8"}
  - not-a-mapping
default_route:
  event_types: [x]
  table: rest
  preset: events
)");
  EXPECT_THAT(problems, Contains(problem_at(4, "routes[0]: needs a key spec: set one of preset, key_file, key")));
  EXPECT_THAT(problems, Contains(problem_at(6, "routes[1]: set only one of preset, key_file, key")));
  EXPECT_THAT(problems, Contains(problem_at(6, "event type 'login' is already routed by routes[0]")));
  EXPECT_THAT(problems, Contains(problem_at(10, "routes[2].event_types: a route must name at least one event type")));
  EXPECT_THAT(problems, Contains(problem_at(12, "routes[3].table: missing required key")));
  EXPECT_THAT(problems, Contains(problem_at(15, "routes[4]: expected a mapping, got a scalar")));
  EXPECT_THAT(problems, Contains(HasSubstr("default_route.event_types: the default route takes every unrouted type")));
  EXPECT_THAT(problems, Contains(HasSubstr("default_route: is never used: set dlq.unknown_type: default_route")));
  EXPECT_THAT(problems, SizeIs(8));
}

TEST(Loader, InlineKeyKeepsYamlAndSource) {
  const auto result = try_load_config_text(R"(kafka: {bootstrap_servers: "b:9092", topics: [events]}
hbase: {endpoints: ["h:9090"]}
routes:
  - event_types: [login]
    table: events
    key:
      salt: {buckets: 16}
      components:
        - {name: event, field: event_id}
dlq: {unknown_type: default_route}
default_route: {table: rest, key_file: keys/rest.yaml}
)",
                                           "test.yaml");
  ASSERT_THAT(result.problems, SizeIs(0));
  const RouteConfig& route = result.config.routes.at(0);
  ASSERT_TRUE(route.key_yaml);
  EXPECT_EQ(route.key_source, "test.yaml:7");
  const YAML::Node key = YAML::Load(*route.key_yaml);
  EXPECT_EQ(key["salt"]["buckets"].as<int>(), 16);
  EXPECT_EQ(key["components"][0]["field"].as<std::string>(), "event_id");
  ASSERT_TRUE(result.config.default_route);
  EXPECT_EQ(*result.config.default_route->key_file, std::filesystem::current_path() / "keys/rest.yaml");
}

// Over framed transport the gateway drops a request above its frame limit (HBase's default 2 MiB)
// with the connection, on every retry: writer batches plus their Thrift encoding must fit it.
TEST(Loader, FramedTransportKeepsWriterBatchesBelowTheGatewaysFrame) {
  const auto framed = [](const std::string& extra_hbase, const std::string& writer) {
    return std::string(R"(kafka:
  bootstrap_servers: 127.0.0.1:19092
  topics: [events]
hbase:
  endpoints: [127.0.0.1:19090]
  transport: framed
)") + extra_hbase +
           "routes:\n  - {event_types: [login], table: events, preset: events}\n" + writer;
  };
  // The defaults (2 MiB batches of up to 500 rows) do not fit HBase's default frame.
  EXPECT_THAT(problems_of(framed("", "")),
              ElementsAre(HasSubstr("writer.batch_max_bytes: (2MiB) plus the Thrift encoding of "
                                    "writer.batch_max_rows (500) rows (41024) is above hbase.framed_max_frame_bytes "
                                    "(2MiB): the gateway drops larger requests. Lower it to 2007KiB or less")));
  EXPECT_THAT(problems_of(framed("", "writer: {batch_max_bytes: 2007KiB}\n")), IsEmpty());
  EXPECT_THAT(problems_of(framed("", "writer:\n  batch_max_bytes: 1MiB\n  batch_max_rows: 20000\n")),
              ElementsAre(problem_at(10,
                                     "(20000) rows (1601024) is above hbase.framed_max_frame_bytes (2MiB): the gateway "
                                     "drops larger requests. Lower it to 484KiB or less")));
  const std::string raised = "  framed_max_frame_bytes: 8MiB\n";
  EXPECT_THAT(problems_of(framed(raised, "writer: {batch_max_bytes: 4MiB, batch_max_rows: 2000}\n")), IsEmpty());
  EXPECT_EQ(load_config_text(framed(raised, ""), "test.yaml").hbase.framed_max_frame_bytes, 8u * 1024 * 1024);
  // Buffered transport has no frame: the limit is not used.
  EXPECT_THAT(problems_of(std::string(kMinimal) + "writer: {batch_max_bytes: 16MiB}\n"), IsEmpty());
}

TEST(Loader, InflightRowBoundsAreAutoByDefaultOrACap) {
  const auto defaults = load_config_text(kMinimal, "test.yaml");
  EXPECT_FALSE(defaults.writer.max_inflight_rows.has_value());
  EXPECT_FALSE(defaults.writer.max_inflight_rows_per_partition.has_value());
  const auto set = load_config_text(
      std::string(kMinimal) + "writer: {max_inflight_rows: 30000, max_inflight_rows_per_partition: auto}\n",
      "test.yaml");
  EXPECT_EQ(set.writer.max_inflight_rows, 30000u);
  EXPECT_FALSE(set.writer.max_inflight_rows_per_partition.has_value());
  EXPECT_THAT(problems_of(std::string(kMinimal) + "writer: {max_inflight_rows: Auto}\n"),
              Contains(HasSubstr("writer.max_inflight_rows: expected an integer or auto, got")));
  EXPECT_THAT(problems_of(std::string(kMinimal) + "writer: {max_inflight_rows: 0}\n"),
              Contains(HasSubstr("must be between 1 and 1000000000 (or auto), got 0")));
  // A cap below a batch is refused as before; `auto` is never compared.
  EXPECT_THAT(
      problems_of(std::string(kMinimal) + "writer: {max_inflight_rows: 10, max_inflight_rows_per_partition: auto}\n"),
      Contains(HasSubstr("writer.max_inflight_rows: (10) is below writer.batch_max_rows")));
}

TEST(Loader, TheKafkaReadAheadMayTakeAtMostHalfTheInflightBytes) {
  const auto problems_for = [](const std::string& kbytes) {
    std::string yaml = kMinimal;
    const auto at = yaml.find("kafka:\n");
    yaml.insert(at + 7, "  properties: {queued.max.messages.kbytes: \"" + kbytes + "\"}\n");
    return problems_of(yaml + "writer: {max_inflight_bytes: 8MiB}\n");
  };
  EXPECT_THAT(problems_for("4096"), IsEmpty());
  EXPECT_THAT(problems_for("4097"),
              Contains(HasSubstr("queued.max.messages.kbytes (4097) is more than half of writer.max_inflight_bytes")));
}

TEST(Loader, CrossFieldChecks) {
  const std::string yaml = std::string(kMinimal) + R"(writer:
  retry_initial_backoff: 20s
  retry_max_backoff: 10s
  batch_max_rows: 1000
  max_inflight_rows: 500
  max_inflight_rows_per_partition: 600
  batch_max_bytes: 8MiB
  max_inflight_bytes: 4MiB
query: {default_limit: 50, max_limit: 10}
table: {ttl: 1500ms}
dlq: {unknown_type: default_route, topic: events}
http: {listen: "localhost"}
)";
  const auto problems = problems_of(yaml);
  EXPECT_THAT(problems, Contains(problem_at(
                            11, "writer.retry_initial_backoff: (20s) is larger than writer.retry_max_backoff (10s)")));
  EXPECT_THAT(problems,
              Contains(problem_at(14, "writer.max_inflight_rows: (500) is below writer.batch_max_rows (1000)")));
  EXPECT_THAT(problems, Contains(problem_at(15, "writer.max_inflight_rows_per_partition: (600) is above")));
  EXPECT_THAT(problems,
              Contains(problem_at(17, "writer.max_inflight_bytes: (4MiB) is below writer.batch_max_bytes (8MiB)")));
  EXPECT_THAT(problems, Contains(problem_at(18, "query.default_limit: (50) is above query.max_limit (10)")));
  EXPECT_THAT(problems, Contains(problem_at(19, "table.ttl: HBase family TTLs are whole seconds")));
  EXPECT_THAT(problems, Contains(problem_at(20, "dlq.unknown_type: is default_route but no default_route")));
  EXPECT_THAT(problems, Contains(problem_at(20, "dlq.topic: 'events' is also consumed")));
  EXPECT_THAT(problems, Contains(problem_at(21, "http.listen: 'localhost' is not host:port")));
  EXPECT_THAT(problems, SizeIs(9));
}

// The dead-letter producer uses the kafka link's Kerberos ticket (app/kerberos_logins.h): GSSAPI
// only in dlq.properties would have no ticket at all (librdkafka's kinit is off), and another
// principal or keytab there would be silently ignored.
TEST(Loader, DeadLetterKerberosComesFromTheKafkaLogin) {
  const std::string kafka_gssapi = R"(kafka:
  bootstrap_servers: 127.0.0.1:19092
  topics: [events]
  properties: {security.protocol: SASL_PLAINTEXT, sasl.mechanism: GSSAPI, sasl.kerberos.principal: c@R,
               sasl.kerberos.keytab: /k/c.keytab}
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - event_types: [login, order]
    table: events
    preset: events
)";
  EXPECT_THAT(problems_of(std::string(kMinimal) + "dlq:\n  properties: {sasl.mechanisms: gssapi}\n"),
              ElementsAre(AllOf(problem_at(11,
                                           "dlq.properties: sasl.mechanism GSSAPI for the dead-letter producer "
                                           "needs kafka.properties to use GSSAPI too"))));
  EXPECT_THAT(problems_of(kafka_gssapi + "dlq:\n  properties: {sasl.kerberos.principal: dlq@R}\n"),
              ElementsAre(problem_at(13, "dlq.properties.sasl.kerberos.principal: differs from kafka.properties")));
  // The same values, or none: one login serves both.
  EXPECT_THAT(problems_of(kafka_gssapi + "dlq:\n  properties: {sasl.kerberos.principal: c@R, acks: all}\n"), SizeIs(0));
  EXPECT_THAT(problems_of(kafka_gssapi), SizeIs(0));
  // Another mechanism for the producer only needs no Kerberos login.
  EXPECT_THAT(problems_of(kafka_gssapi + "dlq:\n  properties: {sasl.mechanism: SCRAM-SHA-512}\n"), SizeIs(0));
}

// `run` cannot log in for Kafka without a keytab: check-config says so before it.
TEST(Loader, KafkaGssapiNeedsAKeytab) {
  const std::string yaml = R"(kafka:
  bootstrap_servers: 127.0.0.1:19092
  topics: [events]
  properties: {security.protocol: SASL_PLAINTEXT, sasl.mechanisms: GSSAPI}
hbase:
  endpoints: [127.0.0.1:19090]
routes:
  - event_types: [login, order]
    table: events
    preset: events
)";
  EXPECT_THAT(problems_of(yaml),
              ElementsAre(problem_at(4, "kafka.properties: sasl.mechanism GSSAPI needs sasl.kerberos.keytab")));
  std::string with_keytab = yaml;
  with_keytab.replace(with_keytab.find("GSSAPI}"), 7, "GSSAPI, sasl.kerberos.keytab: /k/h.keytab}");
  EXPECT_THAT(problems_of(with_keytab), SizeIs(0));
}

TEST(Loader, DeadLetterBoundFitsTheProducer) {
  // The producer refuses anything over its message.max.bytes: a letter cut to the bound must pass.
  const std::string too_large = std::string(kMinimal) + R"(dlq:
  max_letter_bytes: 2MiB
  properties: {message.max.bytes: "1000000"}
)";
  EXPECT_THAT(problems_of(too_large), ElementsAre(problem_at(11,
                                                             "dlq.max_letter_bytes: (2MiB) is larger than "
                                                             "dlq.properties.message.max.bytes (1000000)")));
  const std::string fits = std::string(kMinimal) + R"(dlq:
  max_letter_bytes: 9000
  properties: {message.max.bytes: "10000"}
)";
  EXPECT_EQ(load_config_text(fits, "test.yaml").dlq.max_letter_bytes, 9000u);
  EXPECT_THAT(problems_of(std::string(kMinimal) + "dlq: {max_letter_bytes: 1KiB}\n"),
              ElementsAre(problem_at(10, "must be between 4KiB and 10MiB")));
}

TEST(Loader, RegexTopicMustBeAlone) {
  const std::string yaml = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events-.*", other]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
)";
  EXPECT_THAT(problems_of(yaml),
              ElementsAre(problem_at(1, "kafka.topics: a \"^regex\" subscription must be the only entry")));
}

// Issue 22, defect 4: a pattern that matches the dead-letter topic re-reads every letter and
// dead-letters it again, forever; check-config said ok.
TEST(Loader, RegexTopicMustNotMatchTheDeadLetterTopic) {
  const std::string matching = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events.*"]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
dlq: {topic: events-dlq}
)";
  EXPECT_THAT(problems_of(matching),
              ElementsAre(problem_at(1,
                                     "kafka.topics[0]: '^events.*' also subscribes to the dead-letter topic "
                                     "'events-dlq' (dlq.topic, test.yaml:4); bad events would loop")));
  // The default dlq.topic (hbingest-dlq) is matched as well.
  const std::string default_topic = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^hbingest.*"]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
)";
  EXPECT_THAT(problems_of(default_topic),
              ElementsAre(problem_at(1,
                                     "kafka.topics[0]: '^hbingest.*' also subscribes to the dead-letter topic "
                                     "'hbingest-dlq' (dlq.topic, the default)")));
  const std::string excluded = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events-[0-9]+$"]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
dlq: {topic: events-dlq}
)";
  EXPECT_THAT(problems_of(excluded), SizeIs(0));
  // Under `skip`, rows HBase refuses still go to the dead-letter topic: they would loop too.
  const std::string skip = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events.*"]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
dlq: {topic: events-dlq, on_invalid: skip, unknown_type: skip}
)";
  EXPECT_THAT(problems_of(skip), SizeIs(1));
  // Nothing is dead-lettered (`fail` stops instead): nothing can loop.
  const std::string no_dlq = R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events.*"]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
dlq: {topic: events-dlq, on_invalid: fail, unknown_type: skip}
)";
  EXPECT_THAT(problems_of(no_dlq), SizeIs(0));
  EXPECT_THAT(problems_of(R"(kafka: {bootstrap_servers: "b:9092", topics: ["^events(["]}
hbase: {endpoints: ["h:9090"]}
routes: [{event_types: [login], table: events, preset: events}]
)"),
              ElementsAre(problem_at(1, "kafka.topics[0]: '^events([' is not a valid regular expression")));
}

TEST(EffectiveConfig, PrintsEveryOptionAndRoundTrips) {
  ::setenv("HBINGEST_TEST_TOKEN", "tok-from-env", 1);
  auto base = try_load_config_text(std::string(kMinimal) + R"(  - event_types: [pay]
    table: pay
    key:
      components: [{name: e, field: event_id}]
writer: {retry_max_backoff: 1m30s, batch_max_bytes: 3MiB}
)",
                                   "test.yaml");
  ASSERT_THAT(base.problems, SizeIs(0));
  const std::string effective = effective_config_yaml(base.config);
  for (const char* key :
       {"bootstrap_servers:", "statistics_interval: 5s", "namespace: default", "retry_max_backoff: 1m30s",
        "batch_max_bytes: 3MiB", "max_inflight_bytes: 32MiB", "time_format: auto", "cell_timestamp: event_time",
        "ttl: 10m", "unknown_type: dlq", "listen:", "max_concurrent_queries: 8", "default_limit: 1000", "format: text",
        "shutdown_deadline: 30s", "preset: events", "components:"}) {
    EXPECT_THAT(effective, HasSubstr(key)) << effective;
  }
  const auto again = try_load_config_text(effective, "effective.yaml");
  ASSERT_THAT(again.problems, SizeIs(0)) << effective;
  EXPECT_EQ(effective_config_yaml(again.config), effective);
  EXPECT_EQ(again.config.writer.retry_max_backoff, 90000ms);
  EXPECT_EQ(again.config.routes.at(1).key_yaml.has_value(), true);
}

TEST(EffectiveConfig, RedactsSecrets) {
  ::setenv("HBINGEST_TEST_TOKEN", "tok-from-env", 1);
  ::setenv("HBINGEST_TEST_PASSWORD", "pw-value", 1);
  const auto result = try_load_config_text(std::string(kMinimal) + R"(http: {bearer_token: "${HBINGEST_TEST_TOKEN}"}
dlq:
  properties: {sasl.password: "${HBINGEST_TEST_PASSWORD}", linger.ms: "5"}
)",
                                           "test.yaml");
  ASSERT_THAT(result.problems, SizeIs(0));
  Config config = result.config;
  config.kafka.properties["sasl.jaas.config"] = "jaas-value";
  config.kafka.properties["ssl.key.password"] = "key-pw-value";
  config.kafka.properties["sasl.oauthbearer.client.secret"] = "oauth-value";
  config.kafka.properties["security.protocol"] = "SASL_SSL";
  const std::string effective = effective_config_yaml(config);
  for (const char* secret : {"tok-from-env", "pw-value", "jaas-value", "key-pw-value", "oauth-value"}) {
    EXPECT_THAT(effective, Not(HasSubstr(secret)));
  }
  const YAML::Node node = YAML::Load(effective);
  EXPECT_EQ(node["http"]["bearer_token"].as<std::string>(), "***");
  EXPECT_EQ(node["dlq"]["properties"]["sasl.password"].as<std::string>(), "***");
  EXPECT_EQ(node["dlq"]["properties"]["linger.ms"].as<std::string>(), "5");
  EXPECT_EQ(node["kafka"]["properties"]["security.protocol"].as<std::string>(), "SASL_SSL");
}

// A secret read through ${file:} or ${ENV} into a key that does not accept it (wrong type, out of
// range, not host:port, a YAML-looking file, a size with a bad "unit" that the parser quotes) is
// never echoed: the problem names the reference. Before, "writers: ${file:pw}" printed
// "expected an integer, got '<the password>'".
TEST(Secrets, ProblemsNeverEchoASubstitutedValue) {
  TempDir dir;
  const std::string sentinel = "SENTINEL-c0ffee";
  const auto pw = dir.write("pw", sentinel + "\n");
  const auto yamlish = dir.write("yamlish", "{[: \"" + sentinel + "\n  - ]\n");
  const auto unit = dir.write("unit", "12" + sentinel + "\n");
  ::setenv("HBINGEST_TEST_SECRET", sentinel.c_str(), 1);
  const std::vector<std::string> references = {"${file:" + pw.string() + "}", "${file:" + yamlish.string() + "}",
                                               "${file:" + unit.string() + "}", "${HBINGEST_TEST_SECRET}",
                                               "x${file:" + pw.string() + "}y"};
  // Each places the reference where it cannot be valid.
  const std::vector<std::string> placements = {
      "writer: {writers: \"REF\"}",
      "writer: {batch_max_bytes: \"REF\"}",
      "writer: {linger: \"REF\"}",
      "writer: {durability: \"REF\"}",
      "decode: {kafka_time_fallback: \"REF\"}",
      "decode: {columns: \"REF\"}",
      "http: {listen: \"REF\"}",
      "hbase: {endpoints: [\"REF\"], namespace: \"REF\"}",
      "dlq: {topic: \"REF\"}\nkafka: {bootstrap_servers: b:9092, topics: [\"REF\"]}",
  };
  for (const auto& reference : references) {
    for (std::string placement : placements) {
      for (std::size_t at = placement.find("REF"); at != std::string::npos; at = placement.find("REF"))
        placement.replace(at, 3, reference);
      std::string yaml = placement + "\n";
      if (placement.find("kafka:") == std::string::npos) yaml += "kafka: {bootstrap_servers: b:9092, topics: [t]}\n";
      if (placement.find("hbase:") == std::string::npos) yaml += "hbase: {endpoints: [\"h:9090\"]}\n";
      yaml += "routes:\n  - {event_types: [login], table: events, preset: events}\n";
      const auto problems = try_load_config(dir.write("c.yaml", yaml)).problems;
      EXPECT_THAT(problems, Not(SizeIs(0))) << yaml;
      for (const auto& problem : problems) {
        EXPECT_THAT(problem, Not(HasSubstr(sentinel))) << yaml;
        EXPECT_THAT(problem, Not(HasSubstr("c0ffee"))) << yaml;  // nor a part of it
      }
      EXPECT_THAT(problems, Contains(HasSubstr("the value of '" + reference + "'"))) << yaml;
    }
  }
}

// The literal value of a secret key is scrubbed too when another rule quotes it.
TEST(Secrets, LiteralSecretValuesAreCollectedAndScrubbed) {
  TempDir dir;
  const auto file = dir.write("c.yaml", R"(kafka:
  bootstrap_servers: b:9092
  topics: [t]
  properties: {sasl.password: "literal-pw-1", ssl.key.location: /etc/k.pem}
hbase: {endpoints: ["h:9090"]}
dlq: {topic: "x literal-pw-1", properties: {message.max.bytes: "4096"}}
routes:
  - {event_types: [login], table: events, preset: events}
)");
  const auto result = try_load_config(file);
  EXPECT_THAT(result.config.secrets, Contains("literal-pw-1"));
  EXPECT_THAT(result.config.secrets, Not(Contains("/etc/k.pem")));  // a path, not a secret
  ASSERT_THAT(result.problems, Not(SizeIs(0)));                     // max_letter_bytes > message.max.bytes
  const std::string effective = effective_config_yaml(result.config);
  EXPECT_THAT(effective, Not(HasSubstr("literal-pw-1")));
  EXPECT_THAT(effective, HasSubstr("/etc/k.pem"));
}

// A ${file:} read into a key whose name does not say secret is still printed as ***.
TEST(EffectiveConfig, RedactsFileContentsWhateverTheKey) {
  TempDir dir;
  const auto broker = dir.write("broker", "broker-SENTINEL:9092\n");
  const auto ext = dir.write("ext", "traceId=SENTINEL-ext\n");
  const auto file =
      dir.write("c.yaml", "kafka:\n  bootstrap_servers: ${file:" + broker.string() +
                              "}\n  topics: [t]\n  properties: {sasl.oauthbearer.extensions: \"${file:" + ext.string() +
                              "}\"}\nhbase: {endpoints: [\"h:9090\"]}\nroutes:\n"
                              "  - {event_types: [login], table: events, preset: events}\n");
  const auto result = try_load_config(file);
  ASSERT_THAT(result.problems, SizeIs(0));
  EXPECT_EQ(result.config.kafka.bootstrap_servers, "broker-SENTINEL:9092");
  const std::string effective = effective_config_yaml(result.config);
  EXPECT_THAT(effective, Not(HasSubstr("SENTINEL")));
  const YAML::Node node = YAML::Load(effective);
  EXPECT_EQ(node["kafka"]["bootstrap_servers"].as<std::string>(), "***");
  EXPECT_EQ(node["kafka"]["properties"]["sasl.oauthbearer.extensions"].as<std::string>(), "***");
}

// ---- unsafe settings: warnings, not problems ---------------------------------------------------

std::vector<std::string> warnings_of(const std::string& extra) {
  const auto result = try_load_config_text(std::string(kMinimal) + extra, "test.yaml");
  EXPECT_THAT(result.problems, SizeIs(0)) << extra;
  return result.warnings;
}

TEST(UnsafeSettings, SafeDefaultsWarnAboutNothing) {
  EXPECT_THAT(warnings_of(""), SizeIs(0));
  EXPECT_THAT(warnings_of("dlq: {properties: {acks: all}}\nhttp: {listen: \"127.0.0.1:0\"}\n"), SizeIs(0));
  EXPECT_THAT(warnings_of("dlq: {properties: {request.required.acks: \"-1\"}}\nhttp: {listen: \"localhost:9\"}\n"),
              SizeIs(0));
  EXPECT_THAT(warnings_of("http: {enabled: false, listen: \"0.0.0.0:8080\"}\n"), SizeIs(0));
}

TEST(UnsafeSettings, AutoOffsetResetLatestSkipsDataOfANewGroup) {
  for (const char* value : {"latest", "largest", "END", "Latest"}) {
    const auto result = try_load_config_text(std::string(R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  properties: {auto.offset.reset: )") + value + R"(}
hbase: {endpoints: ["h:9090"]}
routes:
  - {event_types: [login], table: events, preset: events}
)",
                                             "test.yaml");
    EXPECT_THAT(result.problems, SizeIs(0));
    EXPECT_THAT(result.warnings, ElementsAre(AllOf(problem_at(4, "kafka.properties.auto.offset.reset"),
                                                   HasSubstr("silently skips every event"))))
        << value;
  }
  const auto earliest = try_load_config_text(R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  properties: {auto.offset.reset: earliest}
hbase: {endpoints: ["h:9090"]}
routes:
  - {event_types: [login], table: events, preset: events}
)",
                                             "test.yaml");
  EXPECT_THAT(earliest.warnings, SizeIs(0));
}

TEST(UnsafeSettings, DeadLetterAcksOtherThanAll) {
  for (const char* acks : {"acks: \"1\"", "acks: \"0\"", "request.required.acks: \"1\""}) {
    EXPECT_THAT(warnings_of("dlq:\n  properties: {" + std::string(acks) + "}\n"),
                ElementsAre(AllOf(problem_at(11, "dlq.properties."), HasSubstr("can be lost"))))
        << acks;
  }
}

// Without allow_unauthenticated such a listen is an error (HttpConfig tests); with it, a warning.
TEST(UnsafeSettings, OpenHttpPortWithoutToken) {
  for (const char* listen : {"0.0.0.0:8080", "[::]:8080", "10.1.2.3:8080", "ingest.example:8080"}) {
    EXPECT_THAT(warnings_of("http:\n  listen: \"" + std::string(listen) + "\"\n  allow_unauthenticated: true\n"),
                ElementsAre(AllOf(problem_at(11, "http.listen"), HasSubstr("allow_unauthenticated is true"))))
        << listen;
  }
  EXPECT_THAT(warnings_of("http:\n  listen: \"127.0.0.1:8080\"\n  allow_unauthenticated: true\n"), SizeIs(0));
  ::setenv("HBINGEST_TEST_TOKEN", "tok-from-env", 1);
  EXPECT_THAT(warnings_of("http:\n  listen: \"0.0.0.0:8080\"\n  token_env: HBINGEST_TEST_TOKEN\n"), SizeIs(0));
  // A token that failed to load is a problem, not an open port: no warning on top of it.
  const auto missing = try_load_config_text(
      std::string(kMinimal) + "http:\n  listen: \"0.0.0.0:8080\"\n  token_file: /no/such/token\n", "test.yaml");
  EXPECT_THAT(missing.problems, ElementsAre(HasSubstr("http.token_file: cannot read file")));
  EXPECT_THAT(missing.warnings, SizeIs(0));
}

TEST(UnsafeSettings, TransportSecurityWeakened) {
  const auto with = [](const std::string& section, const std::string& properties) {
    const std::string kafka = section == "kafka" ? ", properties: {" + properties + "}" : "";
    const std::string dlq = section == "dlq" ? "dlq: {properties: {" + properties + "}}\n" : "";
    return try_load_config_text("kafka: {bootstrap_servers: \"b:9092\", topics: [events]" + kafka +
                                    "}\nhbase: {endpoints: [\"h:9090\"]}\nroutes:\n"
                                    "  - {event_types: [login], table: events, preset: events}\n" +
                                    dlq,
                                "test.yaml")
        .warnings;
  };
  for (const std::string section : {"kafka", "dlq"}) {
    EXPECT_THAT(with(section, "security.protocol: SASL_PLAINTEXT, sasl.mechanism: PLAIN"),
                ElementsAre(AllOf(HasSubstr(section + ".properties.security.protocol"), HasSubstr("in clear text"))));
    EXPECT_THAT(with(section, "security.protocol: SASL_SSL, sasl.mechanism: PLAIN"), SizeIs(0));
    EXPECT_THAT(with(section, "security.protocol: SASL_PLAINTEXT, sasl.mechanism: SCRAM-SHA-512"), SizeIs(0));
    EXPECT_THAT(with(section, "enable.ssl.certificate.verification: \"false\""),
                ElementsAre(HasSubstr("impersonate the broker")));
    EXPECT_THAT(with(section, "ssl.endpoint.identification.algorithm: none"),
                ElementsAre(HasSubstr("host name is not checked")));
  }
}

TEST(UnsafeSettings, GatewayHostNameNotVerified) {
  const auto ca = std::filesystem::temp_directory_path() / "hbingest-unsafe-test-ca.pem";
  std::ofstream(ca) << "not parsed by the loader\n";
  const auto with = [&](const std::string& tls_extra) {
    return try_load_config_text(
        "kafka: {bootstrap_servers: \"b:9092\", topics: [events]}\n"
        "hbase: {endpoints: [\"h:9090\"], tls: {enabled: true, ca_file: \"" +
            ca.string() + "\"" + tls_extra +
            "}}\n"
            "routes:\n  - {event_types: [login], table: events, preset: events}\n",
        "test.yaml");
  };
  const auto off = with(", verify_hostname: false");
  EXPECT_THAT(off.problems, SizeIs(0));
  EXPECT_THAT(off.warnings,
              ElementsAre(AllOf(HasSubstr("hbase.tls.verify_hostname"), HasSubstr("host name is not checked"))));
  const auto on = with("");
  EXPECT_THAT(on.problems, SizeIs(0));
  EXPECT_THAT(on.warnings, SizeIs(0));
}

TEST(UnsafeSettings, AutoCommitStaysAnError) {
  // Warnings are for settings that run; these would make librdkafka commit offsets of events not
  // yet stored, so the loader refuses them (and KafkaSource forces them off regardless).
  for (const char* property : {"enable.auto.commit", "auto.commit.enable", "enable.auto.offset.store"}) {
    const auto result = try_load_config_text(R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  properties: {)" + std::string(property) + R"(: "true"}
hbase: {endpoints: ["h:9090"]}
routes:
  - {event_types: [login], table: events, preset: events}
)",
                                             "test.yaml");
    EXPECT_THAT(result.problems, ElementsAre(problem_at(4, "hbingest manages commits"))) << property;
  }
}

TEST(UnsafeSettings, ShortSecretsCannotBeScrubbed) {
  ::setenv("HBINGEST_TEST_SHORT", "abc", 1);
  const auto result = try_load_config_text(R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  properties: {sasl.password: "${HBINGEST_TEST_SHORT}"}
hbase: {endpoints: ["h:9090"]}
routes:
  - {event_types: [login], table: events, preset: events}
)",
                                           "test.yaml");
  EXPECT_THAT(result.warnings, ElementsAre(AllOf(problem_at(4, "kafka.properties.sasl.password"),
                                                 HasSubstr("too short to be scrubbed"))));
}

}  // namespace
}  // namespace hbingest::config

namespace hbingest::config {
namespace {

// kMinimal with `tls` lines under hbase:, written next to the files they name.
LoadResult load_with_hbase_tls(const TempDir& dir, const std::string& tls_lines) {
  std::string yaml = kMinimal;
  const std::string anchor = "  endpoints: [127.0.0.1:19090]\n";
  yaml.insert(yaml.find(anchor) + anchor.size(), "  tls:\n" + tls_lines);
  return try_load_config(dir.write("c.yaml", yaml));
}

TEST(Loader, HBaseTlsFilesResolvedAndChecked) {
  TempDir dir;
  dir.write("pki/ca.pem", "ca");
  dir.write("pki/client.pem", "cert");
  dir.write("pki/client.key", "key");
  const auto ok = load_with_hbase_tls(
      dir, "    enabled: true\n    ca_file: pki/ca.pem\n    cert_file: pki/client.pem\n    key_file: pki/client.key\n");
  ASSERT_THAT(ok.problems, SizeIs(0));
  EXPECT_TRUE(ok.config.hbase.tls.enabled);
  EXPECT_EQ(ok.config.hbase.tls.ca_file, dir.path() / "pki/ca.pem");  // relative to the config file
  EXPECT_EQ(ok.config.hbase.tls.key_file, dir.path() / "pki/client.key");
  EXPECT_TRUE(ok.config.hbase.tls.verify_hostname) << "on by default";

  EXPECT_THAT(load_with_hbase_tls(dir, "    enabled: true\n").problems,
              ElementsAre(HasSubstr("hbase.tls.ca_file: required when hbase.tls.enabled is true")));
  EXPECT_THAT(load_with_hbase_tls(dir, "    enabled: true\n    ca_file: pki/nope.pem\n").problems,
              ElementsAre(AllOf(HasSubstr("hbase.tls.ca_file"), HasSubstr("pki/nope.pem' is not a readable file"))));
  EXPECT_THAT(
      load_with_hbase_tls(dir, "    enabled: true\n    ca_file: pki/ca.pem\n    cert_file: pki/client.pem\n").problems,
      ElementsAre(HasSubstr("hbase.tls.cert_file: cert_file and key_file go together")));
  EXPECT_THAT(load_with_hbase_tls(dir, "    ca_file: pki/ca.pem\n").problems,
              ElementsAre(HasSubstr("hbase.tls.ca_file: is set but hbase.tls.enabled is false")));
  EXPECT_THAT(
      load_with_hbase_tls(dir, "    enabled: true\n    ca_file: pki/ca.pem\n    verify_hostnme: false\n").problems,
      ElementsAre(AllOf(HasSubstr("hbase.tls.verify_hostnme: unknown key"), HasSubstr("verify_hostname"))));
}

TEST(Loader, HBaseTlsDefaultsOffAndPrintsEffective) {
  const auto config = load_config_text(kMinimal, "test.yaml");
  EXPECT_FALSE(config.hbase.tls.enabled);
  EXPECT_FALSE(config.hbase.tls.ca_file);
  const YAML::Node effective = YAML::Load(effective_config_yaml(config));
  EXPECT_FALSE(effective["hbase"]["tls"]["enabled"].as<bool>());
  EXPECT_TRUE(effective["hbase"]["tls"]["verify_hostname"].as<bool>());
}

// kMinimal with `sasl` lines under hbase: (line 5 is `sasl:`, its first key line 6).
LoadResult load_with_hbase_sasl(const TempDir& dir, const std::string& sasl_lines) {
  std::string yaml = kMinimal;
  const std::string anchor = "  endpoints: [127.0.0.1:19090]\n";
  yaml.insert(yaml.find(anchor) + anchor.size(), "  sasl:\n" + sasl_lines);
  return try_load_config(dir.write("c.yaml", yaml));
}

TEST(Loader, HBaseSaslGssapi) {
  TempDir dir;
  dir.write("krb/hbingest.keytab", "keytab");
  const auto ok = load_with_hbase_sasl(dir,
                                       "    mechanism: GSSAPI\n"
                                       "    principal: hbingest/ingest-0@EXAMPLE.COM\n"
                                       "    keytab: krb/hbingest.keytab\n");
  ASSERT_THAT(ok.problems, SizeIs(0));
  const HBaseSaslConfig& sasl = ok.config.hbase.sasl;
  EXPECT_EQ(sasl.mechanism, SaslMechanism::gssapi);
  EXPECT_EQ(sasl.principal, "hbingest/ingest-0@EXAMPLE.COM");
  EXPECT_EQ(sasl.keytab, dir.path() / "krb/hbingest.keytab");  // relative to the config file
  EXPECT_EQ(sasl.service, "hbase");
  EXPECT_EQ(sasl.qop, SaslQop::privacy) << "encrypted unless told otherwise";
  EXPECT_EQ(sasl.server_principal_host, "_HOST");
  const YAML::Node effective = YAML::Load(effective_config_yaml(ok.config));
  EXPECT_EQ(effective["hbase"]["sasl"]["mechanism"].as<std::string>(), "GSSAPI");
  EXPECT_EQ(effective["hbase"]["sasl"]["qop"].as<std::string>(), "privacy");
  EXPECT_EQ(effective["hbase"]["sasl"]["keytab"].as<std::string>(), (dir.path() / "krb/hbingest.keytab").string())
      << "a path, not a secret: operators need to see which file is mounted";

  // HBase's own names for the QOP mean the same, and print as ours.
  for (const auto& [name, qop] : {std::pair{"auth", SaslQop::authentication},
                                  {"authentication", SaslQop::authentication},
                                  {"auth-int", SaslQop::integrity},
                                  {"integrity", SaslQop::integrity},
                                  {"auth-conf", SaslQop::privacy},
                                  {"privacy", SaslQop::privacy}}) {
    const auto loaded = load_with_hbase_sasl(dir, std::string("    mechanism: GSSAPI\n    principal: p@R\n") +
                                                      "    keytab: krb/hbingest.keytab\n    qop: " + name + "\n");
    ASSERT_THAT(loaded.problems, SizeIs(0)) << name;
    EXPECT_EQ(loaded.config.hbase.sasl.qop, qop) << name;
  }
}

TEST(Loader, HBaseSaslProblemsNameTheirLine) {
  const auto in_file = [](int line, const std::string& file, const std::string& needle) {
    return AllOf(HasSubstr("/" + file + ":" + std::to_string(line) + ":"), HasSubstr(needle));
  };
  const auto in_c_yaml = [&](int line, const std::string& needle) { return in_file(line, "c.yaml", needle); };
  TempDir dir;
  dir.write("krb/hbingest.keytab", "keytab");
  EXPECT_THAT(load_with_hbase_sasl(dir, "    mechanism: GSSAPI\n").problems,
              ElementsAre(in_c_yaml(7, "hbase.sasl.principal: required when hbase.sasl.mechanism is GSSAPI"),
                          in_c_yaml(7, "hbase.sasl.keytab: required when hbase.sasl.mechanism is GSSAPI")));
  EXPECT_THAT(
      load_with_hbase_sasl(dir, "    mechanism: GSSAPI\n    principal: p@R\n    keytab: krb/nope.keytab\n").problems,
      ElementsAre(AllOf(in_c_yaml(9, "hbase.sasl.keytab"), HasSubstr("krb/nope.keytab' is not a readable file"))))
      << "one problem: not also 'required'";
  EXPECT_THAT(load_with_hbase_sasl(dir, "    mechanism: gssapi\n").problems,
              ElementsAre(in_c_yaml(7, "hbase.sasl.mechanism: 'gssapi' is not one of none, GSSAPI")));
  EXPECT_THAT(load_with_hbase_sasl(dir,
                                   "    mechanism: GSSAPI\n    principal: p@R\n    keytab: krb/hbingest.keytab\n"
                                   "    qop: confidentiality\n")
                  .problems,
              ElementsAre(in_c_yaml(10,
                                    "hbase.sasl.qop: 'confidentiality' is not one of authentication, integrity, "
                                    "privacy, auth, auth-int, auth-conf")));
  EXPECT_THAT(load_with_hbase_sasl(dir,
                                   "    mechanism: GSSAPI\n    principal: p@R\n    keytab: krb/hbingest.keytab\n"
                                   "    service: hbase/gw@R\n    server_principal_host: gw@R\n")
                  .problems,
              ElementsAre(in_c_yaml(11, "hbase.sasl.server_principal_host: 'gw@R' must be a host name"),
                          in_c_yaml(10, "hbase.sasl.service: 'hbase/gw@R' must be the first component")));
  {
    std::string framed = kMinimal;
    framed.insert(framed.find("  endpoints:"),
                  "  transport: framed\n  sasl: {mechanism: GSSAPI, principal: p@R, keytab: krb/hbingest.keytab}\n");
    EXPECT_THAT(
        try_load_config(dir.write("framed.yaml", framed)).problems,
        Contains(in_file(5, "framed.yaml", "hbase.transport: framed cannot be used with hbase.sasl.mechanism GSSAPI")));
  }
  EXPECT_THAT(load_with_hbase_sasl(dir, "    principal: p@R\n    keytab: krb/hbingest.keytab\n").problems,
              ElementsAre(in_c_yaml(7, "hbase.sasl.principal: is set but hbase.sasl.mechanism is none"),
                          in_c_yaml(8, "hbase.sasl.keytab: is set but hbase.sasl.mechanism is none")));
  EXPECT_THAT(load_with_hbase_sasl(dir, "    mechanism: GSSAPI\n    principl: p@R\n").problems,
              Contains(in_c_yaml(8, "hbase.sasl.principl: unknown key (did you mean 'principal'?)")));
}

TEST(Loader, HBaseSaslWithTlsIsAllowed) {
  // A TLS terminator in front of a kerberized gateway: both layers, privacy inside TLS included.
  TempDir dir;
  dir.write("krb/hbingest.keytab", "keytab");
  dir.write("pki/ca.pem", "ca");
  std::string yaml = kMinimal;
  const std::string anchor = "  endpoints: [127.0.0.1:19090]\n";
  yaml.insert(yaml.find(anchor) + anchor.size(),
              "  tls: {enabled: true, ca_file: pki/ca.pem}\n"
              "  sasl: {mechanism: GSSAPI, principal: p@R, keytab: krb/hbingest.keytab, qop: auth-conf}\n");
  const auto result = try_load_config(dir.write("c.yaml", yaml));
  ASSERT_THAT(result.problems, SizeIs(0));
  EXPECT_TRUE(result.config.hbase.tls.enabled);
  EXPECT_EQ(result.config.hbase.sasl.qop, SaslQop::privacy);
}

TEST(Loader, HBaseSaslDefaultsOff) {
  const auto config = load_config_text(kMinimal, "test.yaml");
  EXPECT_EQ(config.hbase.sasl.mechanism, SaslMechanism::none);
  EXPECT_FALSE(config.hbase.sasl.principal);
  const YAML::Node effective = YAML::Load(effective_config_yaml(config));
  EXPECT_EQ(effective["hbase"]["sasl"]["mechanism"].as<std::string>(), "none");
}

TEST(Loader, KafkaStartupCheckTimeout) {
  EXPECT_EQ(load_config_text(kMinimal, "test.yaml").kafka.startup_check_timeout, 15s);
  std::string yaml = kMinimal;
  yaml.insert(yaml.find("hbase:"), "  startup_check_timeout: 0s\n");
  EXPECT_EQ(load_config_text(yaml, "test.yaml").kafka.startup_check_timeout, 0ms) << "0 skips the check";
}

}  // namespace
}  // namespace hbingest::config
