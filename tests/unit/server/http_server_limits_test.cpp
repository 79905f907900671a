// HttpServer's limits against raw sockets: what a hostile or broken client gets, and when.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "hbingest/server/http_server.h"
#include "hbingest/server/tls_credentials.h"

namespace hbingest::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A connected client socket, closed on scope exit.
class RawClient {
 public:
  // `source`: the local address to connect from (any of 127/8 on Linux's loopback).
  explicit RawClient(int port, const char* source = nullptr) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (source != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      EXPECT_EQ(::inet_pton(AF_INET, source, &local.sin_addr), 1) << source;
      EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local), 0) << source;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool send(std::string_view data) { return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) >= 0; }

  // Everything received until the server closes or `timeout` passes; `closed` says which. With
  // `until_seen`, it stops as soon as that text has arrived (a client reading only the head).
  std::string receive(std::chrono::milliseconds timeout, bool* closed = nullptr, std::string_view until_seen = {}) {
    std::string out;
    const auto until = Clock::now() + timeout;
    for (;;) {
      if (!until_seen.empty() && out.find(until_seen) != std::string::npos) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd pfd{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) break;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buffer, static_cast<std::size_t>(n));
    }
    if (closed) *closed = false;
    return out;
  }

 private:
  int fd_;
};

HttpServerOptions small(HttpServerOptions options = {}) {
  options.listen = "127.0.0.1:0";
  return options;
}

HttpResponse ok(const HttpRequest&) {
  return HttpResponse{.status = 200, .content_type = "text/plain", .body = "ok", .headers = {}};
}

TEST(HttpServerLimits, AnythingButGetIs405AndItsBodyIsNeverRead) {
  HttpServer server(small());
  server.get("/v1/events", ok);
  server.start();
  RawClient client(server.port());
  client.send("POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 300000000\r\n\r\n" + std::string(4096, 'x'));
  bool closed = false;
  const std::string answer = client.receive(3s, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 405")) << answer;
  EXPECT_NE(answer.find("Allow: GET, HEAD"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_TRUE(closed) << "the rest of the body would be read as the next request";
}

TEST(HttpServerLimits, GetWithABodyIs413) {
  HttpServer server(small());
  server.get("/v1/events", ok);
  server.start();
  RawClient client(server.port());
  client.send("GET /v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_TRUE(client.receive(3s).starts_with("HTTP/1.1 413"));
}

HttpResponse smuggled(const HttpRequest&) {
  return HttpResponse{.status = 200, .content_type = "text/plain", .body = "SMUGGLED", .headers = {}};
}

// httplib reads no body on a GET and looks at the first Content-Length only: a second one carried a
// request in the body past the 413, answered as the connection's next request.
TEST(HttpServerLimits, ASecondContentLengthIsABodyNotASmuggledRequest) {
  HttpServer server(small());
  server.get("/x", ok);
  server.get("/y", smuggled);
  server.start();
  const std::string inner = "GET /y HTTP/1.1\r\nHost: x\r\n\r\n";
  RawClient client(server.port());
  client.send("GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: " + std::to_string(inner.size()) +
              "\r\n\r\n" + inner);
  bool closed = false;
  const std::string answer = client.receive(3s, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413")) << answer;
  EXPECT_EQ(answer.find("SMUGGLED"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
}

// A head httplib cannot parse (400) left the connection open, and what followed was served as a
// request of its own: behind a proxy that reuses connections, that is a response desync.
TEST(HttpServerLimits, AnUnparsableHeadEndsTheConnection) {
  HttpServer server(small());
  server.get("/y", smuggled);
  server.start();
  for (const std::string& garbage :
       {std::string("GARBAGE\r\n\r\n"), "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n"}) {
    RawClient client(server.port());
    client.send(garbage + "GET /y HTTP/1.1\r\nHost: x\r\n\r\n");
    bool closed = false;
    const std::string answer = client.receive(3s, &closed);
    EXPECT_TRUE(answer.empty() || answer.starts_with("HTTP/1.1 4")) << answer.substr(0, 200);
    EXPECT_EQ(answer.find("SMUGGLED"), std::string::npos) << answer.substr(0, 300);
    EXPECT_TRUE(closed) << garbage.substr(0, 20);
  }
}

// Brotli at httplib's default quality cost ~20x the CPU of the answer: no client may ask for it.
TEST(HttpServerLimits, ResponsesAreNeverCompressed) {
  HttpServer server(small());
  server.get("/big", [](const HttpRequest&) {
    return HttpResponse{
        .status = 200, .content_type = "application/json", .body = std::string(8192, '7'), .headers = {}};
  });
  server.start();
  RawClient client(server.port());
  client.send("GET /big HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip, deflate\r\nConnection: close\r\n\r\n");
  const std::string answer = client.receive(3s);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer.substr(0, 200);
  EXPECT_EQ(answer.find("Content-Encoding"), std::string::npos) << answer.substr(0, 300);
  EXPECT_NE(answer.find(std::string(8192, '7')), std::string::npos);
}

// The header said "timeout=5, max=5" whatever the limits were: a client trusting it reused
// connections the server had closed (health listener: 2 s).
TEST(HttpServerLimits, TheKeepAliveHeaderTellsTheRealLimits) {
  HttpServerOptions options;
  options.keep_alive_timeout = 2500ms;
  options.keep_alive_max_requests = 7;
  HttpServer server(small(options));
  server.get("/x", ok);
  server.start();
  RawClient client(server.port());
  client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = client.receive(5s, nullptr, "ok");
  EXPECT_NE(answer.find("Keep-Alive: timeout=2, max=7"), std::string::npos) << answer;
}

// Head and body go out in two writes: with Nagle, every keep-alive response after the first
// waited for the client's delayed ACK (40 ms each, so 20 requests took over 760 ms).
TEST(HttpServerLimits, KeepAliveResponsesAreNotHeldBackByNagle) {
  HttpServer server(small());
  server.get("/x", ok);
  server.start();
  RawClient client(server.port());
  const auto start = Clock::now();
  for (int i = 0; i < 20; ++i) {
    client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string answer = client.receive(5s, nullptr, "\r\n\r\nok");
    ASSERT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  }
  EXPECT_LT(Clock::now() - start, 600ms);
}

TEST(HttpServerLimits, AHeadOverMaxHeaderBytesIsRefusedAndTheConnectionClosed) {
  HttpServerOptions options;
  options.max_header_bytes = 1024;
  HttpServer server(small(options));
  server.get("/x", ok);
  server.start();
  RawClient client(server.port());
  client.send("GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8192, 'a'));  // no end of line ever
  bool closed = false;
  const std::string answer = client.receive(3s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(answer.empty() || answer.starts_with("HTTP/1.1 400")) << answer;
}

TEST(HttpServerLimits, ASlowHeadIsCutAtTheHeaderTimeoutThoughEveryByteComesInTime) {
  HttpServerOptions options;
  options.header_timeout = 500ms;
  HttpServer server(small(options));
  server.get("/x", ok);
  server.start();
  RawClient client(server.port());
  const std::string head = "GET /x HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(100, 'a');
  const auto start = Clock::now();
  bool closed = false;
  for (const char c : head) {
    if (!client.send(std::string_view(&c, 1))) break;
    client.receive(100ms, &closed);  // a byte every 100 ms: far inside any per-read timeout
    if (closed) break;
  }
  const auto took = Clock::now() - start;
  EXPECT_TRUE(closed);
  EXPECT_LT(took, 3s) << "a per-read timeout would keep it for the whole 10 s of sending";
}

TEST(HttpServerLimits, AnIdleKeepAliveConnectionIsClosedAfterItsTimeout) {
  HttpServerOptions options;
  options.keep_alive_timeout = 300ms;
  HttpServer server(small(options));
  server.get("/x", ok);
  server.start();
  RawClient client(server.port());
  client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  const std::string answer = client.receive(3s, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_TRUE(closed) << "still open 3 s after its answer";
}

TEST(HttpServerLimits, ConnectionsBeyondTheWorkersAndTheQueueGet503AtOnce) {
  HttpServerOptions options;
  options.workers = 1;
  options.max_queued_connections = 0;
  HttpServer server(small(options));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  server.get("/slow", [released](const HttpRequest& r) {
    released.wait();
    return ok(r);
  });
  server.start();
  RawClient first(server.port());
  first.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  std::this_thread::sleep_for(200ms);  // the only worker is now in the handler
  RawClient second(server.port());
  second.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string busy = second.receive(2s);
  EXPECT_TRUE(busy.starts_with("HTTP/1.1 503")) << busy;
  EXPECT_NE(busy.find("Retry-After: 1"), std::string::npos);
  release.set_value();
  EXPECT_TRUE(first.receive(2s).starts_with("HTTP/1.1 200"));
}

// One address holding many half-open requests (heads never finished) used to take every worker and
// every queue slot: every other client's query was an immediate 503 until the heads timed out.
TEST(HttpServerLimits, OneClientAddressFloodingLeavesTheOthersServed) {
  HttpServerOptions options;
  options.workers = 4;
  options.max_queued_connections = 8;
  options.header_timeout = 30s;  // the flood outlives the test
  HttpServer server(small(options));
  server.get("/v1/events", ok);
  server.start();
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 20; ++i) {
    flood.push_back(std::make_unique<RawClient>(server.port(), "127.0.0.1"));
    flood.back()->send("GET /v1/events HTTP/1.1\r\nHost: x\r\n");  // the head never ends
  }
  // Accepted in order: once the last one has its 503, every one before it was admitted or refused.
  const std::string refused = flood.back()->receive(3s);
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 503")) << refused;
  EXPECT_NE(refused.find("http.max_connections_per_client"), std::string::npos) << refused;

  RawClient other(server.port(), "127.0.0.2");
  other.send("GET /v1/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string answer = other.receive(5s, nullptr, "\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;

  // The flood's own connections: the default cap, half the workers, were taken; the rest refused.
  int held = 0;
  for (std::size_t i = 0; i + 1 < flood.size(); ++i)
    held += flood[i]->receive(300ms, nullptr, "\r\n\r\n").empty() ? 1 : 0;
  EXPECT_EQ(held, default_connections_per_client(options.workers));
}

// A slot is given back once the worker has closed the connection, after the client had its whole
// answer: a client reconnecting at once is not over its cap and must not get the cap's 503 (it
// did for ~5 % of such requests when the count still held the connection just answered).
TEST(HttpServerLimits, AClientReconnectingAtOnceAfterEachAnswerIsNeverOverItsCap) {
  HttpServerOptions options;
  options.workers = 4;
  options.max_connections_per_client = 1;
  HttpServer server(small(options));
  server.get("/v1/events", ok);
  server.start();
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    RawClient client(server.port());
    client.send("GET /v1/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    const std::string answer = client.receive(5s, nullptr, "\r\n\r\n");
    ASSERT_FALSE(answer.empty()) << "request " << i;
    refused += answer.starts_with("HTTP/1.1 200") ? 0 : 1;
  }
  EXPECT_EQ(refused, 0);
}

TEST(HttpServerLimits, AStreamedBodyIsSentChunkedAndStopsWhenTheClientGoes) {
  HttpServer server(small());
  std::promise<int> pieces;
  server.get("/stream", [&pieces](const HttpRequest&) {
    HttpResponse res;
    res.content_type = "text/plain";
    res.stream = [&pieces](const BodyWriter& write) {
      int sent = 0;
      while (sent < 100000 && write(std::string(1024, 'x'))) ++sent;
      pieces.set_value(sent);
    };
    return res;
  });
  server.start();
  {
    RawClient client(server.port());
    client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    // Only the head: a client reading for a fixed time drains all 100 MiB on an idle loopback.
    const std::string start = client.receive(5s, nullptr, "\r\n\r\n");
    EXPECT_NE(start.find("Transfer-Encoding: chunked"), std::string::npos) << start.substr(0, 300);
  }  // gone after reading a little of a 100 MiB body
  auto sent = pieces.get_future();
  ASSERT_EQ(sent.wait_for(5s), std::future_status::ready);
  EXPECT_LT(sent.get(), 100000);
}

TEST(TlsCredentials, AnUnusableFileStopsTheStartNamingIt) {
  try {
    const TlsCredentials credentials("/nonexistent/tls.crt", "/nonexistent/tls.key");
    FAIL() << "loaded a missing certificate";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("http.tls_cert_file '/nonexistent/tls.crt'"));
  }
}

TEST(HttpServerLimits, StopEndsAResponseToAClientThatDoesNotRead) {
  auto server = std::make_unique<HttpServer>(small());
  server->get("/big", [](const HttpRequest&) {
    HttpResponse res;
    res.stream = [](const BodyWriter& write) {
      const std::string chunk(64 * 1024, 'x');
      while (write(chunk)) {
      }
    };
    return res;
  });
  server->start();
  RawClient client(server->port());
  client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");  // and never reads: the worker blocks writing
  std::this_thread::sleep_for(300ms);
  const auto start = Clock::now();
  server->stop();
  EXPECT_LT(Clock::now() - start, 5s) << "stop() waited for the 30 s write_timeout";
}

}  // namespace
}  // namespace hbingest::server
