// `hbingest key build` prints exactly the key the daemon writes: the same tricky events go through
// the daemon's path (EventDecoder → its fields → KeySpec::encode, as the pipeline calls it) and
// through the key command, and the key bytes (or the refusal) must be the same.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "hbingest/app/commands.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::app {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSpec = R"(components:
  - {name: user, type: field, field: user, width: 24}
  - {name: n, type: int, field: n, width: 12}
  - {name: tag, type: hash, of: [field:tag, kafka:offset], algorithm: xxh64}
  - {name: time, type: time, field: ts, format: decimal}
  - {name: offset, type: offset}
)";

struct Outcome {
  std::optional<std::string> key_hex;  // set when a key was written
  std::string error;                   // else why not
};

struct TrickyEvent {
  const char* name;
  const char* json;
  bool keyed;
  const char* same_key_as = nullptr;  // a plainer event that must give the same key
};

const TrickyEvent kEvents[] = {
    {"plain", R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7,"tag":"x"})", true},
    {"repeated names: the last value", R"({"event_id":"e","ts":1,"user":"first","n":8,"tag":"y","ts":1700000000123,
       "user":"bob","n":7,"tag":"x"})",
     true, R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7,"tag":"x"})"},
    {"repeated event type and null", R"({"event_id":"e","event_id":"f","ts":1700000000123,"user":"bob","user":null,
       "n":7,"tag":"x"})",
     false},
    {"exponents", R"({"event_id":"e","ts":1.700000000123e12,"user":"bob","n":7e0,"tag":"x"})", true,
     R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7,"tag":"x"})"},
    {"exponent with a fraction", R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7.5e0,"tag":"x"})", false},
    {"decimal strings", R"({"event_id":"e","ts":"1700000000123","user":"bob","n":"7","tag":"x"})", true,
     R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7,"tag":"x"})"},
    {"unicode escapes",
     R"({"event_id":"e","ts":1700000000123,"\u0075ser":"caf\u00e9\ud83d\ude00","n":7,"tag":"\u0078"})", true,
     "{\"event_id\":\"e\",\"ts\":1700000000123,\"user\":\"caf\xc3\xa9\xf0\x9f\x98\x80\",\"n\":7,\"tag\":\"x\"}"},
    {"numbers and bools as text", R"({"event_id":"e","ts":1700000000123,"user":-12,"n":7,"tag":true})", true},
    {"nested object", R"({"event_id":"e","ts":1700000000123,"user":{"id":"bob"},"n":7,"tag":"x"})", false},
    {"array", R"({"event_id":"e","ts":1700000000123,"user":"bob","n":7,"tag":["x"]})", false},
    {"nested time", R"({"event_id":"e","ts":{"ms":1700000000123},"user":"bob","n":7,"tag":"x"})", false},
    {"null", R"({"event_id":"e","ts":1700000000123,"user":null,"n":7,"tag":"x"})", false},
    {"bool as int", R"({"event_id":"e","ts":1700000000123,"user":"bob","n":true,"tag":"x"})", false},
    {"integer above int64", R"({"event_id":"e","ts":1700000000123,"user":"bob","n":18446744073709551615,"tag":"x"})",
     false},
};

// The pipeline's steps for one message: decode, then encode the key from the decoder's fields.
Outcome daemon_key(const keyspec::KeySpec& spec, const std::string& json) {
  event_formats::EventDecoder decoder(config::DecodeConfig{});
  event_formats::DecodedEvent decoded;
  if (const auto invalid = decoder.decode({"events", json, -1}, decoded)) return {std::nullopt, invalid->message};
  const keyspec::KafkaMeta meta{"events", 3, 42, -1};
  std::string key;
  if (const auto error = spec.encode(decoder.fields(), meta, key)) return {std::nullopt, error->message()};
  return {keyspec::to_hex(key), {}};
}

Outcome command_key(const std::filesystem::path& spec_file, const std::string& json) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = key_command({"build", "--spec", spec_file.string(), "--event", json, "--topic", "events",
                                "--partition", "3", "--offset", "42"});
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (code != 0) return {std::nullopt, err};
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("hex:", 0) == 0) return {line.substr(line.find_first_not_of(' ', 4)), {}};
  }
  ADD_FAILURE() << "no hex line in:\n" << out;
  return {};
}

TEST(KeyCommand, BuildsTheKeyTheDaemonWrites) {
  const auto spec_file = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-tricky-spec.yaml");
  std::ofstream(spec_file) << kSpec;
  const auto spec = keyspec::KeySpec::from_yaml_file(spec_file);
  for (const auto& event : kEvents) {
    SCOPED_TRACE(event.name);
    const Outcome daemon = daemon_key(spec, event.json);
    const Outcome command = command_key(spec_file, event.json);
    EXPECT_EQ(daemon.key_hex.has_value(), event.keyed) << daemon.error;
    EXPECT_EQ(command.key_hex, daemon.key_hex) << command.error;
    if (!daemon.key_hex && daemon.error.rfind("key component", 0) == 0) {
      EXPECT_THAT(command.error, HasSubstr(daemon.error)) << "the same reason";
    }
    if (event.same_key_as != nullptr) {
      EXPECT_EQ(daemon.key_hex, daemon_key(spec, event.same_key_as).key_hex);
    }
  }
  std::filesystem::remove(spec_file);
}

// --config FILE --route NAME: the route's own key spec, as `run` builds it, by name or event type.
TEST(KeyCommand, UsesTheKeySpecOfAConfiguredRoute) {
  const auto dir = std::filesystem::temp_directory_path() / ("key_route_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.yaml") << "kafka: {bootstrap_servers: 'k:9092', topics: [events]}\n"
                                        "hbase: {endpoints: ['h:9090']}\n"
                                        "routes:\n"
                                        "  - {name: logins, event_types: [login], table: t, preset: events,\n"
                                        "     preset_params: {buckets: '4'}}\n";
  const auto spec = dir / "spec.yaml";
  std::ofstream(spec) << kSpec;
  const auto plan = [&](const Args& args) {
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = key_command(args);
    std::cout.flush();
    const std::string out = ::testing::internal::GetCapturedStdout();
    const std::string err = ::testing::internal::GetCapturedStderr();
    return std::pair{code, out + err};
  };
  const std::string config = (dir / "config.yaml").string();
  const auto by_name = plan(Args{"plan", "--config", config, "--route", "logins", "--event-id", "login"});
  EXPECT_EQ(by_name.first, 0) << by_name.second;
  EXPECT_THAT(by_name.second, HasSubstr("4 range(s)")) << "the route's preset parameters";
  EXPECT_EQ(plan(Args{"plan", "--config", config, "--route", "login", "--event-id", "login"}).second, by_name.second);
  const auto unknown = plan(Args{"plan", "--config", config, "--route", "logout", "--event-id", "x"});
  EXPECT_NE(unknown.first, 0);
  EXPECT_THAT(unknown.second, HasSubstr("no route named 'logout'"));
  EXPECT_NE(plan(Args{"plan", "--config", config, "--route", "logins", "--spec", spec.string()}).first, 0);
  std::filesystem::remove_all(dir);
}

// The Kafka key and headers are inputs of key build as of the daemon: key.PATH of a json key,
// header:NAME; a key that does not decode under its format is refused, naming it.
TEST(KeyCommand, BuildsKeysFromTheKafkaKeyAndHeaders) {
  const auto dir = std::filesystem::temp_directory_path() / ("key_inputs_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto spec = dir / "spec.yaml";
  std::ofstream(spec) << "components:\n"
                         "  - {name: id, type: field, field: key.order_id, width: 8}\n"
                         "  - {name: t, type: field, field: 'header:tenant', width: 4}\n";
  const auto build = [&](Args extra) {
    Args args{"build", "--spec", spec.string(), "--event", R"({"event_id":"order","ts":1700000000000})"};
    args.insert(args.end(), extra.begin(), extra.end());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = key_command(args);
    std::cout.flush();
    const std::string out = ::testing::internal::GetCapturedStdout();
    return std::pair{code, out + ::testing::internal::GetCapturedStderr()};
  };
  const auto built = build({"--key", R"({"order_id":"o-1"})", "--key-format", "json", "--header", "tenant=acme"});
  EXPECT_EQ(built.first, 0) << built.second;
  EXPECT_THAT(built.second, HasSubstr("6f2d31010101010161636d65")) << "o-1, padded, then acme";
  const auto no_header = build({"--key", R"({"order_id":"o-1"})", "--key-format", "json"});
  EXPECT_NE(no_header.first, 0);
  EXPECT_THAT(no_header.second, HasSubstr("header:tenant"));
  const auto bad_key = build({"--key", "not json", "--key-format", "json", "--header", "tenant=acme"});
  EXPECT_NE(bad_key.first, 0);
  EXPECT_THAT(bad_key.second, HasSubstr("invalid_key"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hbingest::app
