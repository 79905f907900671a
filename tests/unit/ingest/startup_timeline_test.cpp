#include "hbingest/ingest/startup_timeline.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <regex>
#include <sstream>
#include <string>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

// Routes spdlog's default logger into a string for the test's lifetime.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_level(spdlog::level::debug);
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(StartupTimeline, LogsTheFirstStoredRowOnceInTheWordingBenchParses) {
  const CapturedLog log;
  // Started 5 s ago: every figure is at least that, whatever the machine's speed.
  StartupTimeline timeline(StartupTimeline::Clock::now() - 5s);
  timeline.mark("tables checked");
  timeline.joined();
  timeline.first_message();
  timeline.joined();  // later events change nothing
  timeline.rows_stored();
  timeline.rows_stored();
  const std::string text = log.text();
  EXPECT_NE(text.find("debug startup: tables checked after "), std::string::npos) << text;
  const std::regex line(
      R"(info first row stored after (\d+) ms \(joined group after (\d+) ms, first message after (\d+) ms\)\n)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(text, match, line)) << text;
  const auto stored = std::stol(match[1]);
  const auto joined = std::stol(match[2]);
  const auto first = std::stol(match[3]);
  EXPECT_GE(joined, 5000);
  EXPECT_LE(joined, first);
  EXPECT_LE(first, stored);
  EXPECT_EQ(text.find("first row stored", match.position(0) + match.length(0)), std::string::npos)
      << "logged once: " << text;
}

TEST(StartupTimeline, AStepNeverReportedShowsAsUnknown) {
  const CapturedLog log;
  StartupTimeline timeline;
  timeline.rows_stored();
  EXPECT_NE(log.text().find("(joined group after ? ms, first message after ? ms)"), std::string::npos) << log.text();
}

}  // namespace
}  // namespace hbingest::ingest
