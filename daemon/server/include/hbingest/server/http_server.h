#pragma once
// HttpServer: a small GET/HEAD-only HTTP/1.1 server, hardened against hostile clients, over
// cpp-httplib's request parser and router (kept out of this header).
//
// cpp-httplib 0.11.4 (Debian 12) runs a whole keep-alive connection on one worker with timeouts per
// read only, reads lines of any length and queues accepted sockets without bound. So the
// connection itself is ours (connection_stream.h): a fixed pool of `workers` threads, each serving
// one connection at a time; at most `max_queued_connections` accepted connections wait for one,
// any more get a 503 and are closed by the acceptor (nothing hangs). One client address (an IPv6
// /64) holds at most `max_connections_per_client` of them, queued or served, and gets a 503 beyond:
// the default, half the workers, leaves the other half and the queue to everyone else however
// many connections one address opens (docs/operations.md). Each request's head must
// arrive whole within `header_timeout` and `max_header_bytes` (slowloris, endless lines); an idle
// keep-alive connection is closed after `keep_alive_timeout`; a response must be written within
// `write_timeout`. Anything but GET/HEAD gets 405, a request announcing a body 413, both before a
// byte of the body is read, and the connection is then closed. Optional TLS (tls_credentials.h).
//
// Routes are registered before start(). Handlers run on the worker threads, several at a time:
// they must be thread-safe. An exception escaping a handler becomes a 500 with a JSON body.
// stop() (and the destructor) stop accepting, let running handlers finish and join every thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hbingest::server {

class TlsCredentials;

struct HttpRequest {
  std::string method;  // GET or HEAD: nothing else reaches a handler
  std::string path;
  std::vector<std::pair<std::string, std::string>> params;  // query string, decoded, in order
  std::map<std::string, std::string> headers;               // names lower-cased
  std::string remote_addr;

  // The header's value, if present (name in any case).
  std::optional<std::string> header(std::string_view name) const;
};

// Hands one piece of a streamed body to the client; false once it cannot be sent (client gone,
// write_timeout passed, server stopping): the producer should then stop.
using BodyWriter = std::function<bool(std::string_view chunk)>;
// Produces a body while it is sent (chunked transfer encoding), on the worker thread, after the
// status line and headers have gone out. Not called for HEAD.
using StreamedBody = std::function<void(const BodyWriter& write)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  StreamedBody stream{};                                     // set: the body is streamed by it and `body` is ignored
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:8080";               // host:port; port 0 picks a free one; [v6]:port accepted
  int workers = 16;                                    // connections served at once, one thread each
  int max_queued_connections = 64;                     // accepted, waiting for a worker; beyond: 503 and close
  int max_connections_per_client = 0;                  // queued or served, per client address; 0: the default
  std::size_t max_header_bytes = 16 * 1024;            // request line + headers
  std::chrono::milliseconds header_timeout{5000};      // to receive a whole request head
  std::chrono::milliseconds keep_alive_timeout{5000};  // idle between requests
  int keep_alive_max_requests = 100;                   // then the connection is closed
  std::chrono::milliseconds write_timeout{30000};      // to write one whole response
  std::shared_ptr<TlsCredentials> tls{};               // set: HTTPS only
};

// max_connections_per_client when 0: half the workers, at least one.
constexpr int default_connections_per_client(int workers) { return workers > 1 ? workers / 2 : 1; }

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Exact-path GET (and HEAD) route. Call before start().
  void get(const std::string& path, HttpHandler handler);

  // Binds (throws std::runtime_error naming the address when it cannot) and serves on background
  // threads. Connections are accepted as soon as start() returns.
  void start();
  void stop() noexcept;
  // The bound port (the real one when configured as 0). Valid after start().
  int port() const noexcept;
  const std::string& host() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::server
