#pragma once
// HttpServer: a small GET-only HTTP server over cpp-httplib (kept out of this header).
//
// Routes are registered before start(). Handlers run on the server's worker threads, several at a
// time: they must be thread-safe. An exception escaping a handler becomes a 500 with a JSON body.
// stop() (and the destructor) stop accepting, let running handlers finish and join the listener.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hbingest::server {

struct HttpRequest {
  std::string path;
  std::vector<std::pair<std::string, std::string>> params;  // query string, decoded, in order
  std::map<std::string, std::string> headers;               // names lower-cased
  std::string remote_addr;

  // The header's value, if present (name in any case).
  std::optional<std::string> header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one; [v6]:port accepted
  int threads = 8;                        // handler threads
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Exact-path GET route. Call before start().
  void get(const std::string& path, HttpHandler handler);

  // Binds (throws std::runtime_error naming the address when it cannot) and serves on a background
  // thread. Connections are accepted as soon as start() returns.
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
