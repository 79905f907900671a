// Tests the logging setup of hbingest::app: formats, levels, SIGHUP-style reloads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hbingest/app/logging.h"
#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/support/secrets.h"
#include "text_lines.h"

namespace hbingest::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using hbingest::testing::lines_of;

TEST(Logging, JsonLinesEscapeEverything) {
  std::ostringstream out;
  setup_logging({.level = "info", .format = config::LogFormat::json},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::info("write failed: \"quoted\"\nsecond line\tand \\ backslash");
  spdlog::warn("bad byte \xff here");
  spdlog::debug("not shown at info");
  spdlog::default_logger()->flush();
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["level"], "info");
  EXPECT_EQ(first["logger"], "hbingest");
  EXPECT_EQ(first["msg"], "write failed: \"quoted\"\nsecond line\tand \\ backslash");
  EXPECT_TRUE(first["thread"].is_number());
  const std::string ts = first["ts"];
  EXPECT_EQ(ts.size(), 24u) << ts;  // 2024-05-01T12:00:00.123Z
  EXPECT_EQ(ts.back(), 'Z');
  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["level"], "warning");
  EXPECT_THAT(second["msg"].get<std::string>(), HasSubstr("bad byte "));
}

TEST(Logging, TextFormatAndLevelChanges) {
  std::ostringstream out;
  setup_logging({.level = "warn", .format = config::LogFormat::text},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  spdlog::info("hidden at warn");
  spdlog::error("shown at warn");
  set_log_level("debug");  // what SIGHUP does after re-reading logging.level
  spdlog::debug("shown after reload");
  spdlog::default_logger()->flush();
  const std::string text = out.str();
  EXPECT_THAT(text, Not(HasSubstr("hidden at warn")));
  EXPECT_THAT(text, HasSubstr("error [hbingest]"));
  EXPECT_THAT(text, HasSubstr("shown at warn"));
  EXPECT_THAT(text, HasSubstr("shown after reload"));
  EXPECT_THROW(set_log_level("verbose"), std::invalid_argument);
  EXPECT_THROW(setup_logging({.level = "loud", .format = config::LogFormat::text},
                             std::make_shared<spdlog::sinks::ostream_sink_mt>(out)),
               std::invalid_argument);
}

// Every line passes the scrubber, whatever logs it (librdkafka's log callback logs through
// spdlog too): a registered secret never reaches the sink, in either format, even where JSON
// escaping would change its bytes.
TEST(Logging, RegisteredSecretsAreScrubbedInBothFormats) {
  support::clear_registered_secrets();
  support::register_secrets({"hunter2-secret", "quo\"ted-secret"});
  for (const auto format : {config::LogFormat::text, config::LogFormat::json}) {
    std::ostringstream out;
    setup_logging({.level = "debug", .format = format}, std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
    spdlog::debug("rdkafka#consumer-1 CONF: sasl.password = hunter2-secret");
    spdlog::error("auth failed with quo\"ted-secret and hunter2-secret");
    spdlog::default_logger()->flush();
    EXPECT_THAT(out.str(), Not(HasSubstr("hunter2")));
    EXPECT_THAT(out.str(), Not(HasSubstr("ted-secret")));
    EXPECT_THAT(out.str(), HasSubstr("sasl.password = ***"));
  }
  support::clear_registered_secrets();
}

// What the process writes to file descriptor 2 while `fn` runs (a library's own fprintf(stderr)).
template <typename Fn>
std::string stderr_of(Fn&& fn) {
  std::fflush(stderr);
  char path[] = "/tmp/hbingest-stderr-XXXXXX";
  const int capture = ::mkstemp(path);
  const int saved = ::dup(2);
  ::dup2(capture, 2);
  fn();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string text;
  ::lseek(capture, 0, SEEK_SET);
  char buffer[4096];
  for (ssize_t n; (n = ::read(capture, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(capture);
  ::unlink(path);
  return text;
}

// Thrift's TSocket reports a refused connect through its GlobalOutput, which prints plain text to
// stderr unless routed: with logging.format json that broke the log exactly during an outage.
TEST(Logging, ThriftSocketMessagesAreJsonLinesOfOurs) {
  std::ostringstream out;
  setup_logging({.level = "info", .format = config::LogFormat::json},
                std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  connectors::Thrift2Options options;
  options.endpoints = {"127.0.0.1:1"};  // nothing listens on port 1
  const std::string stray = stderr_of([&] {
    connectors::HBaseAdmin admin(options);
    EXPECT_THROW(admin.table_exists("default", "events"), connectors::HBaseError);
  });
  spdlog::default_logger()->flush();
  EXPECT_EQ(stray, "") << "plain text on stderr beside the JSON log";
  bool thrift_line = false;
  for (const auto& line : lines_of(out.str())) {
    const auto parsed = nlohmann::json::parse(line);  // throws on a line that is not JSON
    thrift_line = thrift_line || parsed["msg"].get<std::string>().find("TSocket::open()") != std::string::npos;
  }
  EXPECT_TRUE(thrift_line) << out.str();
}

}  // namespace
}  // namespace hbingest::app
