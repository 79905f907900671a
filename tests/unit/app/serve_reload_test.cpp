// SIGHUP reloads of `hbingest serve`, on the built binary with real signals. No stack: serve starts
// without contacting HBase or Kafka (both point at 127.0.0.1:1), and listens on an ephemeral port.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// The stop deadline the configs below give (shutdown_deadline) plus SignalWatcher::kStopGrace: the
// backstop. A clean stop of an idle server takes milliseconds.
constexpr auto kStopLimit = 2s + 5s;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `hbingest serve --config FILE` with stdout and stderr in a log file; killed if a test leaves it running.
class Serve {
 public:
  explicit Serve(const std::filesystem::path& config) : log_(config.string() + ".log") {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    const std::string binary = HBINGEST_BINARY;
    const std::string config_text = config.string();
    char* argv[] = {const_cast<char*>(binary.c_str()), const_cast<char*>("serve"), const_cast<char*>("--config"),
                    const_cast<char*>(config_text.c_str()), nullptr};
    const int error = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::runtime_error("cannot start " + binary + ": " + std::strerror(error));
  }
  ~Serve() {
    if (!exit_status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Serve(const Serve&) = delete;
  Serve& operator=(const Serve&) = delete;

  std::string log() const { return read_file(log_); }
  void signal(int number) const { ::kill(pid_, number); }

  bool log_shows(const std::string& text, std::chrono::milliseconds limit = 5s) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (log().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || exited()) return log().find(text) != std::string::npos;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  // The exit status once the process has ended within `limit`.
  std::optional<int> wait_exit(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!exited() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
    return exit_status_;
  }

 private:
  bool exited() {
    if (exit_status_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  bool exited() const { return const_cast<Serve*>(this)->exited(); }

  std::filesystem::path log_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

class ServeReload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hbingest-serve-reload-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    config_ = dir_ / "serve.yaml";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One line of JSON (a flow document), `extra` members first.
  static std::string config_text(const std::string& extra = "") {
    return "{" + extra +
           "\"kafka\": {\"bootstrap_servers\": \"127.0.0.1:1\", \"topics\": [\"events\"]}, "
           "\"hbase\": {\"endpoints\": [\"127.0.0.1:1\"]}, \"http\": {\"listen\": \"127.0.0.1:0\"}, "
           "\"shutdown_deadline\": \"2s\", "
           "\"routes\": [{\"event_types\": [\"login\"], \"table\": \"events\", \"preset\": \"events\"}]}";
  }

  std::filesystem::path dir_;
  std::filesystem::path config_;
};

TEST_F(ServeReload, AConfigReplacedByAFifoIsRefusedAndTheStopAfterItIsHandled) {
  // The reload used to open the config on the signal thread: open() of a FIFO nobody writes to
  // blocked it, and the SIGTERM after it was never handled, nor the shutdown backstop armed.
  std::ofstream(config_) << config_text() << "\n";
  Serve serve(config_);
  ASSERT_TRUE(serve.log_shows("hbingest serve: listening on")) << serve.log();
  std::filesystem::remove(config_);
  ASSERT_EQ(::mkfifo(config_.c_str(), 0600), 0);
  serve.signal(SIGHUP);
  EXPECT_TRUE(serve.log_shows("reload on SIGHUP failed")) << serve.log();
  EXPECT_THAT(serve.log(), HasSubstr(config_.string() + ": the config must be a regular file, this is a FIFO"));
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait_exit(kStopLimit), 0) << serve.log();
}

TEST_F(ServeReload, AConfigWithContentAfterItsDocumentIsRefusedWithLineAndColumn) {
  // yaml-cpp reads `{...} junk` as a second document, which YAML::Load dropped: it reloaded as ok.
  std::ofstream(config_) << config_text() << "\n";
  Serve serve(config_);
  ASSERT_TRUE(serve.log_shows("hbingest serve: listening on")) << serve.log();
  const std::string changed = config_text("\"logging\": {\"level\": \"debug\"}, ");
  std::ofstream(config_) << changed << " junk\n";
  serve.signal(SIGHUP);
  EXPECT_TRUE(serve.log_shows("reload on SIGHUP failed")) << serve.log();
  EXPECT_THAT(serve.log(), HasSubstr(config_.string() + ":1:" + std::to_string(changed.size() + 2) +
                                     ": content after the end of the config document"));
  EXPECT_THAT(serve.log(), Not(HasSubstr("log level reloaded")));
  // The file fixed, the next reload applies it.
  std::ofstream(config_) << changed << "\n";
  serve.signal(SIGHUP);
  EXPECT_TRUE(serve.log_shows("log level reloaded: debug")) << serve.log();
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait_exit(kStopLimit), 0) << serve.log();
}

}  // namespace
