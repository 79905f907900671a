// Tests the check-config subcommand of hbingest::app against files written by the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hbingest/app/commands.h"
#include "hbingest/config/loader.h"

namespace hbingest::app {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
const std::filesystem::path kSourceDir = HBINGEST_SOURCE_DIR;

struct CommandRun {
  int code;
  std::string out;
  std::string err;
};

CommandRun run(const Args& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = check_config_command(args);
  std::fflush(stdout);
  std::fflush(stderr);
  CommandRun result{code, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
  return result;
}

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(CheckConfig, ExampleIsOk) {
  const std::string file = (kSourceDir / "config/examples/local.yaml").string();
  const CommandRun r = run({file});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "ok: " + file + "\n");
}

TEST(CheckConfig, PrintEffectiveIsLoadableYaml) {
  const std::string file = (kSourceDir / "config/examples/local.yaml").string();
  const CommandRun r = run({file, "--print-effective"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("max_inflight_rows_per_partition: 10000"));
  EXPECT_THAT(r.out, HasSubstr("# ok: " + file));
  const auto again = config::try_load_config_text(r.out, "effective");
  EXPECT_TRUE(again.problems.empty()) << ::testing::PrintToString(again.problems);
}

TEST(CheckConfig, ListsConfigAndKeySpecProblemsTogether) {
  const auto file = write_temp("bad.yaml", R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
  pol_batch: 10
hbase: {endpoints: ["h:9090"]}
routes:
  - event_types: [login]
    table: events
    preset: no_such_preset
  - event_types: [order]
    table: orders
    key:
      components: 7
)");
  const CommandRun r = run({file.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, Not(HasSubstr("ok:")));
  EXPECT_THAT(r.err, HasSubstr(file.string() + ":4:3: kafka.pol_batch: unknown key (did you mean 'poll_batch'?)"));
  EXPECT_THAT(r.err, HasSubstr(file.string() + ":9: routes[0].key: "));
  EXPECT_THAT(r.err, HasSubstr("no_such_preset"));
  EXPECT_THAT(r.err, HasSubstr(file.string() + ":13: routes[1].key: "));
  EXPECT_THAT(r.err, HasSubstr("3 problems"));
  std::filesystem::remove(file);
}

TEST(CheckConfig, EachKeySpecProblemIsItsOwnLineWithTheRoute) {
  const auto file = write_temp("two-spec-problems.yaml", R"(kafka:
  bootstrap_servers: b:9092
  topics: [events]
hbase: {endpoints: ["h:9090"]}
routes:
  - event_types: [login]
    table: events
    preset: events
  - event_types: [order]
    table: orders
    key:
      components:
        - {name: user, type: field, field: user, width: 8, colour: red}
        - {name: ts, type: time, field: ts, input: epoch_sec}
)");
  const CommandRun r = run({file.string()});
  EXPECT_EQ(r.code, 1);
  std::vector<std::string> lines;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  const std::string route = file.string() + ":12: routes[1].key: ";
  EXPECT_THAT(lines, ElementsAre(AllOf(StartsWith(route), HasSubstr("unknown key 'colour'")),
                                 AllOf(StartsWith(route), HasSubstr("got 'epoch_sec' (did you mean 'epoch_s'?)")),
                                 file.string() + ": 2 problems"));
  std::filesystem::remove(file);
}

TEST(CheckConfig, UsageErrors) {
  EXPECT_EQ(run({}).code, 2);
  EXPECT_EQ(run({"a.yaml", "b.yaml"}).code, 2);
  EXPECT_EQ(run({"--frobnicate", "a.yaml"}).code, 2);
  const CommandRun missing = run({"/nonexistent/hbingest.yaml"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/hbingest.yaml: cannot read the config file"));
}

std::string config_with(const std::string& topics, const std::string& preset) {
  return "kafka:\n  bootstrap_servers: b:9092\n  topics: " + topics +
         "\nhbase: {endpoints: [\"h:9090\"]}\nroutes:\n  - event_types: [login]\n    table: events\n    preset: " +
         preset + "\n";
}

TEST(CheckConfig, PerRecordKeyWithoutTheTopicIsAnErrorWhenSeveralTopicsCanArrive) {
  // Two topics' records at the same partition/offset, same event and millisecond, would share a row.
  for (const std::string topics : {"[logins, orders]", "[\"^events-.*\"]"}) {
    const auto file = write_temp("two-topics.yaml", config_with(topics, "events"));
    const CommandRun r = run({file.string()});
    EXPECT_EQ(r.code, 1) << topics;
    EXPECT_THAT(r.err, AllOf(HasSubstr("routes[0].key: the key identifies a record by kafka:partition and "
                                       "kafka:offset but not by its topic"),
                             HasSubstr("events_by_topic"), HasSubstr(file.string())))
        << topics;
    const auto fixed = write_temp("two-topics-fixed.yaml", config_with(topics, "events_by_topic"));
    const CommandRun ok = run({fixed.string()});
    EXPECT_EQ(ok.code, 0) << topics << ": " << ok.err;
    EXPECT_THAT(ok.err, Not(HasSubstr("warning")));
  }
  const auto one = write_temp("one-topic.yaml", config_with("[logins]", "events"));
  const CommandRun single = run({one.string()});
  EXPECT_EQ(single.code, 0) << single.err;
  EXPECT_THAT(single.err, Not(HasSubstr("warning")));
}

TEST(CheckConfig, KeyWithoutPartitionAndOffsetIsWarnedAboutAsNotUniquePerRecord) {
  const auto file = write_temp("timeline.yaml", config_with("[logins]", "timeline"));
  const CommandRun r = run({file.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: " + file.string() +
                               ":8: routes[0].key: the key does not contain kafka:partition and kafka:offset"));
}

std::string config_with_key(const std::string& components) {
  return "kafka:\n  bootstrap_servers: b:9092\n  topics: [logins]\nhbase: {endpoints: [\"h:9090\"]}\nroutes:\n"
         "  - event_types: [login]\n    table: events\n    key:\n      components:\n" +
         components;
}

TEST(CheckConfig, AShortHashOfPartitionAndOffsetIsNotAUniqueKey) {
  // Two bytes of a hash take 65,536 values: records of one event type and millisecond share a row
  // after a few hundred. Neither unique nor a latest-per-entity key: an error, not a warning.
  const std::string fields =
      "        - {name: event, type: field, field: event_id, width: 16}\n"
      "        - {name: time, type: time, field: ts}\n";
  for (const std::string bytes : {"1", "2", "4"}) {
    const auto file =
        write_temp("short-hash.yaml", config_with_key(fields +
                                                      "        - {name: position, type: hash, algorithm: "
                                                      "md5, bytes: " +
                                                      bytes + ", of: [kafka:partition, kafka:offset]}\n"));
    const CommandRun r = run({file.string()});
    EXPECT_EQ(r.code, 1) << bytes << ": " << r.out << r.err;
    EXPECT_THAT(r.err,
                AllOf(HasSubstr(file.string() + ":9: routes[0].key: component 'position' keeps " + bytes + " byte"),
                      HasSubstr("md5(kafka:partition+kafka:offset), too few to tell Kafka records apart"),
                      HasSubstr("`bytes: 8`")))
        << bytes;
  }
  const auto full = write_temp("full-hash.yaml",
                               config_with_key(fields + "        - {name: position, type: hash, algorithm: xxh64, of: "
                                                        "[kafka:partition, kafka:offset]}\n"));
  const CommandRun ok = run({full.string()});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_THAT(ok.err, Not(HasSubstr("warning")));
}

// Unsafe settings are warnings (exit 0); secrets never appear in anything check-config prints.
TEST(CheckConfig, WarnsAboutUnsafeSettingsAndNeverPrintsSecrets) {
  const auto secret = write_temp("secret-file", "SENTINEL-d00dfeed\n");
  const auto file = write_temp("unsafe.yaml",
                               "kafka:\n  bootstrap_servers: b:9092\n  topics: [logins]\n"
                               "  properties: {auto.offset.reset: latest, sasl.oauthbearer.extensions: "
                               "\"${file:" +
                                   secret.string() +
                                   "}\"}\n"
                                   "hbase: {endpoints: [\"h:9090\"]}\n"
                                   "dlq: {properties: {acks: \"1\"}}\n"
                                   "http: {listen: \"0.0.0.0:8080\", allow_unauthenticated: true}\n"
                                   "routes:\n  - {event_types: [login], table: logins, preset: events}\n");
  const CommandRun ok = run({file.string(), "--print-effective"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_THAT(ok.err, HasSubstr("warning: " + file.string() + ":4:"));
  EXPECT_THAT(ok.err, HasSubstr("kafka.properties.auto.offset.reset: a new consumer group"));
  EXPECT_THAT(ok.err, HasSubstr("dlq.properties.acks: a dead letter acknowledged with acks 1"));
  EXPECT_THAT(ok.err, HasSubstr("http.listen: '0.0.0.0:8080' is reachable from other machines"));
  EXPECT_THAT(ok.out + ok.err, Not(HasSubstr("SENTINEL")));
  EXPECT_THAT(ok.out, HasSubstr("sasl.oauthbearer.extensions: \"***\""));

  // The same secret where it cannot be valid: the problem names the reference, not the value.
  const auto bad = write_temp("bad-secret.yaml",
                              "kafka: {bootstrap_servers: \"b:9092\", topics: [logins]}\n"
                              "hbase: {endpoints: [\"h:9090\"]}\n"
                              "writer: {writers: \"${file:" +
                                  secret.string() +
                                  "}\"}\n"
                                  "routes:\n  - {event_types: [login], table: logins, preset: events}\n");
  const CommandRun failed = run({bad.string(), "--print-effective"});
  EXPECT_EQ(failed.code, 1);
  EXPECT_THAT(failed.err, HasSubstr("writer.writers: expected an integer, got the value of '${file:"));
  EXPECT_THAT(failed.out + failed.err, Not(HasSubstr("SENTINEL")));
}

// The row design examples (docs/rows.md) pass check-config, routes built as `run` builds them; every
// example in config/examples/ is checked here or needs secrets it cannot have (examples_test.cpp).
TEST(CheckConfig, EveryExampleWithoutSecretsIsOk) {
  const std::set<std::string> checked = {"local.yaml",       "avro.yaml",           "protobuf.yaml",
                                         "rows_typed.yaml",  "rows_templates.yaml", "order_status_upserts.yaml",
                                         "rows_packed.yaml", "rows_seeds.yaml"};
  const std::set<std::string> need_secrets = {"production.yaml", "tls.yaml", "kerberos.yaml"};
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir / "config/examples")) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(checked.contains(name) || need_secrets.contains(name))
        << name << ": add it to this test (or to examples_test.cpp if it needs secrets)";
  }
  for (const auto& name : checked) {
    const std::string file = (kSourceDir / "config/examples" / name).string();
    const CommandRun r = run({file});
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, "ok: " + file + "\n");
  }
}

// An impossible row design (docs/rows.md, "What check-config refuses"): refused, the message naming
// the config line that says it. `body` follows a two-line kafka/hbase header; `at` is the text of
// the line the message must name.
struct Refusal {
  std::string case_name;
  std::string body;
  std::string at;
  std::string message;
};

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> cases = {
      {"delete key reads the value",
       "routes:\n  - event_types: [order]\n    topics: [orders]\n    table: orders\n    on_tombstone: delete\n"
       "    preset: order_status\n",
       "preset: order_status",
       "routes[0].key: on_tombstone delete needs a key made of the Kafka key and metadata only, but component "
       "'order' reads the value's field 'order_id' (read key.FIELD, header:NAME or kafka:... instead)"},
      {"delete table reads the value",
       "routes:\n  - event_types: [order]\n    topics: [orders]\n    table: \"orders_${field:region}\"\n"
       "    table_values: {\"field:region\": [eu, us]}\n    on_tombstone: delete\n"
       "    key: {components: [{type: field, field: key, width: 16}]}\n",
       "table: \"orders_${field:region}\"",
       "routes[0]: on_tombstone delete: table 'orders_${field:region}' reads ${field:region}, which a tombstone "
       "(no value) does not have"},
      {"template variable without allowed values",
       "routes:\n  - event_types: [order]\n    table: \"orders_${field:region}\"\n    preset: events_by_topic\n",
       "table: \"orders_${field:region}\"",
       "routes[0]: table 'orders_${field:region}': ${field:region} comes from the data: list the values it may "
       "take in table_values.field:region (a list or {pattern: REGEX})"},
      {"table_values of a variable the table lacks",
       "routes:\n  - event_types: [order]\n    table: orders\n    table_values: {\"field:region\": [eu]}\n"
       "    preset: events_by_topic\n",
       "table: orders", "routes[0]: table_values.field:region: table 'orders' has no ${field:region}"},
      {"allowed value that is no table name",
       "routes:\n  - event_types: [order]\n    table: \"orders_${field:region}\"\n"
       "    table_values: {\"field:region\": [eu, \"us east\"]}\n    preset: events_by_topic\n",
       "table: \"orders_${field:region}\"",
       "routes[0]: table_values.field:region: 'us east' cannot be part of an HBase table name (A-Z a-z 0-9 _ . -)"},
      {"pattern that is no regular expression",
       "routes:\n  - event_types: [order]\n    table: \"orders_${field:region}\"\n"
       "    table_values: {\"field:region\": {pattern: \"[a-z\"}}\n    preset: events_by_topic\n",
       "table: \"orders_${field:region}\"", "routes[0]: table_values.field:region.pattern: not a regular expression"},
      {"table with a character HBase refuses",
       "routes:\n  - event_types: [order]\n    table: \"orders/${event_type}\"\n    preset: events_by_topic\n",
       "table: \"orders/${event_type}\"",
       "routes[0]: table 'orders/${event_type}': '/' is not allowed in an HBase table name (A-Z a-z 0-9 _ . -)"},
      {"format without topics",
       "schema_registry: {url: \"http://r:8081\"}\nroutes:\n  - event_types: [order]\n    table: orders\n"
       "    format: avro\n    preset: events_by_topic\n",
       "table: orders", "routes[0]: format: needs topics (the format of which topics?)"},
      {"two formats for a topic",
       "schema_registry: {url: \"http://r:8081\"}\nroutes:\n  - event_types: [order]\n    topics: [orders]\n"
       "    table: orders\n    format: avro\n    preset: events_by_topic\n  - event_types: [login]\n"
       "    topics: [orders]\n    table: logins\n    format: json\n    preset: events_by_topic\n",
       "table: logins", "routes[1].format: topic 'orders' is avro in routes[0], json here"},
      {"on_tombstone differing per topic",
       "routes:\n  - event_types: [order]\n    topics: [orders]\n    table: orders\n    on_tombstone: skip\n"
       "    preset: events_by_topic\n  - event_types: [refund]\n    topics: [orders]\n    table: refunds\n"
       "    on_tombstone: dlq\n    preset: events_by_topic\n",
       "table: refunds",
       "routes[1].on_tombstone: differs from routes[0]'s for topic 'orders': a tombstone of one topic does one thing"},
      {"kafka:value typed long",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: kafka:value, to: \"d:raw\", type: long}\n",
       "{from: kafka:value, to: \"d:raw\", type: long}",
       "columns[0]: from kafka:value holds the message's bytes: type text or bytes, not long"},
      {"kafka:value to family:*",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: kafka:value, to: \"d:*\"}\n",
       "{from: kafka:value, to: \"d:*\"}",
       "columns[0]: from kafka:value is one cell: name its qualifier (to: \"d:raw\")"},
      {"* without family:*",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: \"*\", to: \"d:all\"}\n",
       "{from: \"*\", to: \"d:all\"}", "columns[0]: from \"*\" writes one cell per field: write to: \"d:*\""},
      {"family:* from metadata",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: kafka:topic, to: \"m:*\"}\n",
       "{from: kafka:topic, to: \"m:*\"}",
       "columns[0]: to \"m:*\" names each cell after a member of a record of the value or key; 'kafka:topic' is not "
       "one (write to: \"family:qualifier\")"},
      {"exclude on one input",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: user_id, to: \"d:user\", exclude: [x]}\n",
       "{from: user_id, to: \"d:user\", exclude: [x]}",
       "columns[0]: exclude applies to \"*\" and to records written as family:*"},
      {"bad to",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: user_id, to: user_id}\n",
       "{from: user_id, to: user_id}", "columns[0]: to: 'user_id' is not family:qualifier or family:*"},
      {"unknown type",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: amount, to: \"d:amount\", type: decimal}\n",
       "{from: amount, to: \"d:amount\", type: decimal}",
       "routes[0].columns[0].type: 'decimal' is not one of text, string, long, int, short, double, float, boolean, "
       "bigdecimal, bytes"},
      {"unknown input prefix",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: \"headers:x\", to: \"d:x\"}\n",
       "{from: \"headers:x\", to: \"d:x\"}",
       "columns[0]: from: input 'headers:x': unknown prefix 'headers:' (header:, kafka:); a value field with ':' in "
       "its name: value.<name>"},
      {"unknown kafka input",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns:\n"
       "      - {from: \"kafka:nope\", to: \"d:x\"}\n",
       "{from: \"kafka:nope\", to: \"d:x\"}",
       "columns[0]: from: input 'kafka:nope': expected kafka:topic, kafka:partition, kafka:offset, kafka:timestamp, "
       "kafka:key or kafka:value"},
      {"key component reading no input",
       "routes:\n  - event_types: [order]\n    table: orders\n"
       "    key: {components: [{type: field, field: \"headers:x\", width: 8}, {type: hash, of: [kafka:topic], "
       "algorithm: xxh64, bytes: 4}, {type: partition}, {type: offset}]}\n",
       "key: {components:", "routes[0].key: component 'headers:x': input 'headers:x': unknown prefix 'headers:'"},
      {"empty columns",
       "routes:\n  - event_types: [order]\n    table: orders\n    preset: events_by_topic\n    columns: []\n",
       "columns: []", "routes[0].columns: must list at least one column (leave it out for the default)"},
      {"two routes of one name",
       "routes:\n  - {name: a, event_types: [order], table: orders, preset: events_by_topic}\n"
       "  - {name: a, event_types: [login], table: logins, preset: events_by_topic}\n",
       "{name: a, event_types: [login]", "routes[1].name: 'a' names another route too"},
  };
  return cases;
}

TEST(CheckConfig, EachImpossibleRowDesignIsRefusedNamingItsLine) {
  const std::string header =
      "kafka: {bootstrap_servers: \"b:9092\", topics: [orders, events]}\n"
      "hbase: {endpoints: [\"h:9090\"]}\n";
  for (const Refusal& refusal : refusals()) {
    const std::string text = header + refusal.body;
    const std::size_t at = text.find(refusal.at);
    ASSERT_NE(at, std::string::npos) << refusal.case_name;
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    const auto file = write_temp("refused.yaml", text);
    const CommandRun r = run({file.string()});
    EXPECT_EQ(r.code, 1) << refusal.case_name << ": " << r.out << r.err;
    // "FILE:LINE: ..." or "FILE:LINE:COL: ...", the message on the same line.
    std::vector<std::string> named;
    std::istringstream err(r.err);
    for (std::string l; std::getline(err, l);) {
      if (l.starts_with(file.string() + ":" + std::to_string(line) + ":") &&
          l.find(refusal.message) != std::string::npos) {
        named.push_back(l);
      }
    }
    EXPECT_EQ(named.size(), 1u) << refusal.case_name << ": expected line " << line << " and '" << refusal.message
                                << "' in:\n"
                                << r.err;
    std::filesystem::remove(file);
  }
}

}  // namespace
}  // namespace hbingest::app
