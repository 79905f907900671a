// Tests the check-config subcommand of hbingest::app against files written by the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

}  // namespace
}  // namespace hbingest::app
