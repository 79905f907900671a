// A peer that is not a Thrift2 gateway (an HTTP-mode gateway, a sidecar's 503, an SSH server on a
// wrong port, a TLS terminator) answers the writer, the scanner and the admin through a real socket
// on 127.0.0.1. Thrift reads lengths before the bytes arrive: these answers once became 0.36-1.4 GiB
// allocations per call. Every client must fail with an error that says what answered, and no single
// allocation during the call may come near those sizes.
//
// The largest single allocation is recorded (tests/support/largest_allocation.h).

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/thrift2_options.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "largest_allocation.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace hbingest::connectors {
namespace {

// Far below what the answers below read as lengths (352 MB .. 2 GiB), far above what a bounded
// reply needs (a cell's 10 MiB, a list of a quarter million cells).
constexpr std::size_t kAllocationBound = 64 * 1024 * 1024;

// Answers every connection once with `answer`, then closes it.
class CannedServer {
 public:
  explicit CannedServer(std::string answer) : answer_(std::move(answer)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 8) != 0) {
      throw std::runtime_error("test server: cannot listen on 127.0.0.1");
    }
    socklen_t length = sizeof address;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  CannedServer(const CannedServer&) = delete;
  CannedServer& operator=(const CannedServer&) = delete;

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      pollfd listening{listen_fd_, POLLIN, 0};
      if (::poll(&listening, 1, 50) <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      answer(fd);
      ::close(fd);
    }
  }

  // Waits for the request, answers, and closes once the client has hung up (or after a second).
  void answer(int fd) const {
    std::vector<char> buffer(64 * 1024);
    pollfd client{fd, POLLIN, 0};
    if (::poll(&client, 1, 1000) <= 0 || ::recv(fd, buffer.data(), buffer.size(), 0) <= 0) return;
    ::send(fd, answer_.data(), answer_.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    while (::poll(&client, 1, 1000) > 0 && ::recv(fd, buffer.data(), buffer.size(), 0) > 0) {
    }
  }

  std::string answer_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Thrift2Options options_for(const CannedServer& server, ThriftTransportKind transport, ThriftProtocolKind protocol) {
  Thrift2Options options;
  options.endpoints = {server.endpoint()};
  options.transport = transport;
  options.protocol = protocol;
  options.connect_timeout = std::chrono::milliseconds(2000);
  options.read_timeout = std::chrono::milliseconds(2000);
  return options;
}

struct Client {
  const char* name;
  std::function<void(const Thrift2Options&)> call;
};

const std::vector<Client>& clients() {
  static const std::vector<Client> all = {
      {"writer",
       [](const Thrift2Options& options) {
         const std::vector<RowMutation> rows = {{"row-1", {{"d", "q", "v"}}, 1, std::nullopt}};
         make_thrift2_sink(options)->write("events", rows, {});
       }},
      {"scanner",
       [](const Thrift2Options& options) {
         auto factory = make_thrift2_scanner_factory(options, 1);
         ScanRequest request;
         request.table = "events";
         factory->open(request)->next_chunk();
       }},
      {"admin", [](const Thrift2Options& options) { HBaseAdmin(options).table_exists("default", "events"); }},
  };
  return all;
}

// Runs `call` and returns the HBaseError's message; fails the test if the call allocated more than
// the bound at once or did not throw HBaseError.
std::string failure_of(const std::function<void(const Thrift2Options&)>& call, const Thrift2Options& options) {
  test_support::reset_largest_allocation();
  std::string message;
  try {
    call(options);
    ADD_FAILURE() << "the call succeeded against a server that is not a Thrift2 gateway";
  } catch (const HBaseError& e) {
    message = e.what();
    EXPECT_TRUE(e.retriable()) << message;
  }
  if (test_support::counts_allocations()) {
    EXPECT_LT(test_support::largest_allocation(), kAllocationBound)
        << "one allocation of " << test_support::largest_allocation()
        << " bytes for one wrong answer; error: " << message;
  }
  return message;
}

struct ForeignAnswer {
  const char* what;
  std::string bytes;
  ThriftTransportKind transport;
  ThriftProtocolKind protocol;
  std::string expected;  // in every client's error message
};

void PrintTo(const ForeignAnswer& answer, std::ostream* os) { *os << answer.what; }

class ForeignReplyTest : public ::testing::TestWithParam<ForeignAnswer> {};

TEST_P(ForeignReplyTest, EveryClientFailsBoundedNamingWhatAnswered) {
  const auto& answer = GetParam();
  CannedServer server(answer.bytes);
  for (const auto& client : clients()) {
    SCOPED_TRACE(client.name);
    const std::string message = failure_of(client.call, options_for(server, answer.transport, answer.protocol));
    EXPECT_NE(message.find(answer.expected), std::string::npos) << message;
  }
}

using Transport = ThriftTransportKind;
using Protocol = ThriftProtocolKind;
const std::string kEnvoy503 =
    "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 19\r\ncontent-type: text/plain\r\n\r\nno healthy upstream";

INSTANTIATE_TEST_SUITE_P(
    Answers, ForeignReplyTest,
    ::testing::Values(
        ForeignAnswer{"sidecar_503", kEnvoy503, Transport::buffered, Protocol::binary,
                      "not a Thrift binary reply (starts with 'HTTP/1.1 503 Ser'): an HTTP server answered"},
        ForeignAnswer{"ssh_banner", "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", Transport::buffered, Protocol::binary,
                      "not a Thrift binary reply (starts with 'SSH-2.0-OpenSSH_')"},
        // A TLS server's answer to bytes that are not a ClientHello: an alert record.
        ForeignAnswer{"tls_alert", std::string("\x15\x03\x03\x00\x02\x02\x32", 7), Transport::buffered,
                      Protocol::binary, "(starts with '\\x15\\x03\\x03\\x00\\x02\\x022'): a TLS record"},
        ForeignAnswer{"framed_sidecar_503", kEnvoy503, Transport::framed, Protocol::binary,
                      "not a Thrift binary reply (starts with 'HTTP'): an HTTP server answered"},
        ForeignAnswer{"compact_sidecar_503", kEnvoy503, Transport::buffered, Protocol::compact,
                      "not a Thrift compact reply (starts with 'HTTP/1.1 503 Ser')"},
        // A kerberized gateway on libthrift before 0.14 (Java's TSaslServerTransport) reads a plain
        // call's first byte as a SASL status and answers ERROR with its message.
        ForeignAnswer{"kerberized_gateway", std::string("\x04\x00\x00\x00\x13Invalid status -128", 24),
                      Transport::buffered, Protocol::binary,
                      "a SASL server answered ('Invalid sta...'): the gateway requires Kerberos (its "
                      "hbase.thrift.security.qop is set); configure hbase.sasl"},
        ForeignAnswer{"compact_kerberized_gateway", std::string("\x04\x00\x00\x00\x13Invalid status -126", 24),
                      Transport::buffered, Protocol::compact, "the gateway requires Kerberos"},
        // A reply that starts as Thrift and then claims a 2 GiB method name.
        ForeignAnswer{"huge_method_name", std::string("\x80\x01\x00\x02\x7f\xff\xff\xff", 8), Transport::buffered,
                      Protocol::binary, "refused by Thrift: TProtocolException: Exceeded size limit"}),
    [](const ::testing::TestParamInfo<ForeignAnswer>& param) { return std::string(param.param.what); });

// A reply that starts as Thrift and then claims two million rows: the list is refused before the
// vector for them is made.
TEST(ForeignReplyTest, ScanReplyClaimingMillionsOfRowsIsRefused) {
  std::string reply("\x80\x01\x00\x02", 4);
  reply += std::string("\x00\x00\x00\x11", 4) + "getScannerResults" + std::string(4, '\0');
  reply += std::string("\x0f\x00\x00\x0c", 4);  // field 0 (success): list<struct>
  reply += std::string("\x00\x1e\x84\x80", 4);  // 2,000,000 elements
  CannedServer server(reply);
  const std::string message = failure_of(clients()[1].call, options_for(server, Transport::buffered, Protocol::binary));
  EXPECT_NE(message.find("refused by Thrift: TProtocolException: Exceeded size limit"), std::string::npos) << message;
}

}  // namespace
}  // namespace hbingest::connectors
