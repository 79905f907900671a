#include "hbingest/server/http_server.h"

#include "hbingest/server/tls_credentials.h"
#include "hbingest/support/host_port.h"
#include "hbingest/support/rate_limited_log.h"
#include "hbingest/support/text.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "connection_stream.h"

namespace hbingest::server {

namespace {

using detail::Clock;
using detail::ConnectionStream;

// Refused connections waiting for their 503 to be written; beyond this they are closed at once.
constexpr std::size_t kMaxRejectsPending = 64;
// Refused connections kept half-closed after their 503, and for how long at most.
constexpr std::size_t kMaxLingering = 128;
constexpr auto kRejectLinger = std::chrono::milliseconds(250);
constexpr auto kRejectPoll = std::chrono::milliseconds(20);
// A connection over its client's cap waits this long (on no worker and no queue slot) for the client
// to give a slot back before it gets its 503: a slot is given back only once the worker has closed
// its connection, and a client that had the whole answer before that and reconnected at once is
// not over its cap. Short: it only covers the worker's way from the answer to the close.
constexpr auto kCapGrace = std::chrono::milliseconds(200);
// Connections waiting so, all clients (each client at most as many as its cap): the rest over their
// cap get their 503 at once. Part of the port's socket bound.
constexpr std::size_t kMaxWaitingForCap = 32;
// Accept backlog: cpp-httplib 0.11.4 listens with 5, too few for a burst of connections that the
// acceptor would answer (or refuse) within microseconds.
constexpr int kListenBacklog = 128;
// The least time a connection gets for its first request once a worker takes it.
constexpr auto kMinHeadTime = std::chrono::seconds(1);

HttpRequest to_request(const httplib::Request& req) {
  HttpRequest out;
  out.method = req.method;
  out.path = req.path;
  for (const auto& [name, value] : req.params) out.params.emplace_back(name, value);
  for (const auto& [name, value] : req.headers) out.headers.emplace(support::to_lower(name), value);
  out.remote_addr = req.remote_addr;
  return out;
}

void apply(HttpResponse&& from, httplib::Response& to) {
  to.status = from.status;
  for (const auto& [name, value] : from.headers) to.set_header(name, value);
  if (!from.stream) {
    to.set_content(from.body, from.content_type);
    return;
  }
  to.set_chunked_content_provider(from.content_type,
                                  [stream = std::move(from.stream)](std::size_t, httplib::DataSink& sink) {
                                    stream([&sink](std::string_view chunk) {
                                      // An empty chunk would end the chunked body early.
                                      return chunk.empty() || sink.write(chunk.data(), chunk.size());
                                    });
                                    sink.done();
                                    return true;
                                  });
}

void set_json_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
}

bool is_get_or_head(const httplib::Request& req) { return req.method == "GET" || req.method == "HEAD"; }

// Any body, or framing that is ambiguous: a second Content-Length (even "0") would let a body
// through as the next request on this connection (request smuggling), so it counts as a body.
bool announces_body(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  const auto [first, last] = req.headers.equal_range("Content-Length");
  std::size_t lengths = 0;
  for (auto it = first; it != last; ++it, ++lengths) {
    if (it->second.empty() || it->second.find_first_not_of('0') != std::string::npos) return true;
  }
  return lengths > 1;
}

std::string unavailable_response(std::string_view body) {
  return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
         "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

// What a refused connection gets, written without reading its request.
const std::string& busy_response() {
  static const std::string response =
      unavailable_response(R"({"error":"server busy: every connection slot is taken; retry later"})");
  return response;
}
const std::string& client_cap_response() {
  static const std::string response = unavailable_response(
      R"({"error":"too many connections from this client address (http.max_connections_per_client); retry later"})");
  return response;
}

// What a connection counts against for http.max_connections_per_client: its IPv4 address, or the
// /64 of its IPv6 address (a host is usually given a whole /64 and may use any address in it).
// Empty when the peer is unknown (it has gone already): such a connection ends at its first read.
std::string client_of(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return {};
  if (peer.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
    return std::string(reinterpret_cast<const char*>(&v4), sizeof v4);
  }
  if (peer.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
    const auto* bytes = reinterpret_cast<const char*>(v6.s6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return std::string(bytes + 12, 4);
    return std::string(bytes, 8);
  }
  return {};
}

std::string client_text(const std::string& client) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (client.size() == 4) {
    ::inet_ntop(AF_INET, client.data(), text, sizeof text);
    return text;
  }
  if (client.size() == 8) {
    in6_addr prefix{};
    std::copy(client.begin(), client.end(), reinterpret_cast<char*>(prefix.s6_addr));
    ::inet_ntop(AF_INET6, &prefix, text, sizeof text);
    return std::string(text) + "/64";
  }
  return "an unknown address";
}

constexpr std::chrono::seconds kCapLogInterval{10};

// Runs what the accept loop hands over at once, on the accept thread: our process_and_close_socket
// only queues the socket for a worker (or refuses it), so the acceptor never waits on a client.
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// Writes on a socket whose peer is gone raise SIGPIPE; OpenSSL's writes cannot pass MSG_NOSIGNAL.
void block_sigpipe_in_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  const auto it = headers.find(support::to_lower(name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

struct HttpServer::Impl {
  // cpp-httplib's Server with the connection handling replaced: its request parsing, routing and
  // response writing (process_request) run over our ConnectionStream, on our workers.
  class GuardedServer final : public httplib::Server {
   public:
    explicit GuardedServer(Impl& impl) : impl_(impl) {}
    void serve(int fd, Clock::time_point accepted_at) { impl_.serve(*this, fd, accepted_at); }
    using httplib::Server::process_request;

   private:
    // Called by the accept loop (through InlineTaskQueue) for each accepted socket.
    bool process_and_close_socket(socket_t sock) override {
      impl_.admit(sock);
      return true;
    }
    Impl& impl_;
  };

  HttpServerOptions options;
  std::string host;
  int configured_port = 0;
  int bound_port = 0;
  int listen_fd = -1;
  GuardedServer server{*this};

  std::mutex mutex;
  std::condition_variable work;
  struct Accepted {
    int fd;
    Clock::time_point at;  // the first request's head deadline counts from here, queueing included
    std::string client;    // client_of(fd)
  };
  struct Reject {
    int fd;
    const std::string* response;
  };
  std::deque<Accepted> queued;  // waiting for a worker
  // Over their client's cap, waiting up to kCapGrace for one of its slots (accepted_at + kCapGrace).
  std::deque<Accepted> waiting_for_cap;
  std::deque<Reject> rejects;  // refused, waiting for their 503
  // Connections each client address holds, queued or being served; an address holding none is
  // erased, so the map is bounded by the connections held.
  std::unordered_map<std::string, int> held;
  support::RateLimitedLog cap_log{kCapLogInterval};
  std::atomic<bool> stopping{false};
  std::atomic<bool> listener_done{false};
  std::vector<std::thread> workers;
  std::thread rejecter;
  std::thread listener;  // last: joined in stop() before the server goes

  void admit(int fd) {
    std::string client = client_of(fd);
    bool capped = false;
    {
      const std::lock_guard lock(mutex);
      // Per client first: a client at its cap is refused even while slots are free, so that the
      // slots it would take stay free for the others.
      capped = !stopping && held_by(client) >= options.max_connections_per_client;
      if (!stopping && !capped && has_queue_room()) {
        ++held[client];
        queued.push_back({fd, Clock::now(), std::move(client)});
        work.notify_all();
        return;
      }
      if (capped && waiting_for_cap.size() < kMaxWaitingForCap &&
          waiting_of(client) < options.max_connections_per_client) {
        waiting_for_cap.push_back({fd, Clock::now(), std::move(client)});
        work.notify_all();  // the reject loop times the wait out
        return;
      }
      fd = refuse(fd, capped);
    }
    if (capped) log_cap(client);
    if (fd >= 0) ::close(fd);
  }

  // Called with the mutex held.
  int waiting_of(const std::string& client) const {
    return static_cast<int>(std::count_if(waiting_for_cap.begin(), waiting_for_cap.end(),
                                          [&](const Accepted& a) { return a.client == client; }));
  }
  // Called with the mutex held.
  bool has_queue_room() const {
    return queued.size() < static_cast<std::size_t>(options.max_queued_connections) + free_workers();
  }
  // Hands `fd` to the reject loop for its 503 and returns -1, or returns `fd` for the caller to
  // close without an answer: under TLS (a plain-text 503 means nothing before a handshake) or when
  // too many refusals wait for theirs already. Called with the mutex held.
  int refuse(int fd, bool capped) {
    if (options.tls || rejects.size() >= kMaxRejectsPending) return fd;
    rejects.push_back({fd, capped ? &client_cap_response() : &busy_response()});
    work.notify_all();
    return -1;
  }
  void log_cap(const std::string& client) {
    cap_log.log(spdlog::level::warn, "http-client-cap",
                "http: " + client_text(client) + " holds " + std::to_string(options.max_connections_per_client) +
                    " connections (http.max_connections_per_client): its next ones get 503");
  }
  // A slot of `client` was given back: its connection waiting longest for one takes it. Called with
  // the mutex held.
  void admit_waiting(const std::string& client) {
    if (stopping || held_by(client) >= options.max_connections_per_client || !has_queue_room()) return;
    const auto it = std::find_if(waiting_for_cap.begin(), waiting_for_cap.end(),
                                 [&](const Accepted& a) { return a.client == client; });
    if (it == waiting_for_cap.end()) return;
    ++held[client];
    queued.push_back(std::move(*it));
    waiting_for_cap.erase(it);
    work.notify_all();
  }
  // Refuses the connections that waited kCapGrace for a slot of their client; returns the clients
  // to log and fills `to_close` with what gets no answer. Called with the mutex held.
  std::vector<std::string> refuse_waited_out(Clock::time_point now, std::vector<int>& to_close) {
    std::vector<std::string> capped;
    while (!waiting_for_cap.empty() && (stopping || now >= waiting_for_cap.front().at + kCapGrace)) {
      Accepted waited = std::move(waiting_for_cap.front());
      waiting_for_cap.pop_front();
      if (const int fd = refuse(waited.fd, true); fd >= 0) to_close.push_back(fd);
      capped.push_back(std::move(waited.client));
    }
    return capped;
  }

  // Called with the mutex held.
  int held_by(const std::string& client) const {
    const auto it = held.find(client);
    return it == held.end() ? 0 : it->second;
  }
  void release(const std::string& client) {
    const auto it = held.find(client);
    if (it != held.end() && --it->second <= 0) held.erase(it);
  }

  // Workers not serving a connection; called with the mutex held. Counted by who is busy, not by
  // who is waiting: a worker not yet started, or between two connections, is about to take one, and
  // counting only the waiting ones refused connections with a 503 while a worker was free.
  std::size_t free_workers() const { return static_cast<std::size_t>(options.workers) - busy; }
  std::size_t busy = 0;

  void work_loop() {
    block_sigpipe_in_this_thread();
    for (;;) {
      Accepted accepted{};
      {
        std::unique_lock lock(mutex);
        work.wait(lock, [&] { return stopping || !queued.empty(); });
        if (queued.empty()) return;  // stopping
        accepted = queued.front();
        queued.pop_front();
        ++busy;
      }
      server.serve(accepted.fd, accepted.at);
      const std::lock_guard lock(mutex);
      --busy;
      release(accepted.client);
      admit_waiting(accepted.client);
    }
  }

  // Writes each refused connection its 503, then keeps it half-closed for a moment (reading and
  // dropping what the client sends) so that the answer is not destroyed by the reset a close with
  // unread data causes. All of them on this one thread: a flood of connections costs no worker.
  void reject_loop() {
    block_sigpipe_in_this_thread();
    struct Lingering {
      int fd;
      Clock::time_point until;
    };
    std::deque<Lingering> lingering;
    std::vector<pollfd> polled;
    std::array<char, 4096> scratch{};
    for (;;) {
      std::vector<Reject> fresh;
      std::vector<int> to_close;
      std::vector<std::string> capped;
      {
        std::unique_lock lock(mutex);
        const auto ready = [&] { return stopping || !rejects.empty(); };
        if (lingering.empty() && waiting_for_cap.empty()) {
          work.wait(lock, [&] { return ready() || !waiting_for_cap.empty(); });
        } else {
          work.wait_for(lock, kRejectPoll, ready);
        }
        capped = refuse_waited_out(Clock::now(), to_close);
        if (stopping && rejects.empty() && lingering.empty()) {
          for (const int fd : to_close) ::close(fd);
          return;
        }
        fresh.assign(rejects.begin(), rejects.end());
        rejects.clear();
      }
      for (const auto& client : capped) log_cap(client);
      for (const int fd : to_close) ::close(fd);
      for (const auto& [fd, response] : fresh) {
        // A fresh socket's send buffer takes the whole answer: this never blocks.
        ::send(fd, response->data(), response->size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        ::shutdown(fd, SHUT_WR);
        if (lingering.size() >= kMaxLingering) {
          ::close(lingering.front().fd);
          lingering.pop_front();
        }
        lingering.push_back({fd, Clock::now() + kRejectLinger});
      }
      polled.clear();
      for (const auto& l : lingering) polled.push_back({l.fd, POLLIN, 0});
      ::poll(polled.data(), polled.size(), 0);
      const auto now = Clock::now();
      std::deque<Lingering> kept;
      for (std::size_t i = 0; i < lingering.size(); ++i) {
        bool done = now >= lingering[i].until || stopping;
        if (!done && polled[i].revents != 0) {
          const ssize_t n = ::recv(lingering[i].fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
          done = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);  // the client has closed
        }
        if (done) {
          ::close(lingering[i].fd);
        } else {
          kept.push_back(lingering[i]);
        }
      }
      lingering.swap(kept);
    }
  }

  void serve(GuardedServer& http, int fd, Clock::time_point accepted_at) {
    ConnectionStream stream(fd, options.tls ? options.tls->context() : nullptr, options.write_timeout, stopping);
    // Counted from the accept, so time spent in the queue counts against a slow client; a client
    // that sent its request at once has it waiting in the socket and still gets kMinHeadTime for
    // the round trips of a TLS handshake and for reading it.
    const auto first_deadline = std::max(accepted_at + options.header_timeout, Clock::now() + kMinHeadTime);
    if (options.tls && !stream.handshake(first_deadline)) return;
    for (int served = 0; served < options.keep_alive_max_requests; ++served) {
      const auto idle_until = served == 0 ? first_deadline : Clock::now() + options.keep_alive_timeout;
      if (!stream.wait_for_request(idle_until)) return;
      stream.begin_request(served == 0 ? first_deadline : Clock::now() + options.header_timeout,
                           options.max_header_bytes);
      bool parsed = false;  // the head was read whole: httplib calls back only then
      bool refused = false;
      bool client_closes = false;
      const bool last = served + 1 == options.keep_alive_max_requests;
      const bool ok = http.process_request(stream, last, client_closes, [&](httplib::Request& req) {
        parsed = true;
        // Ranges are refused: many ranges of one body would multiply the response.
        req.ranges.clear();
        // No compression: brotli at httplib's quality costs ~20x the CPU of the answer itself, a
        // lever any client could pull on every response.
        req.headers.erase("Accept-Encoding");
        if (!is_get_or_head(req) || announces_body(req)) {
          // The pre-routing handler answers 405/413 without reading the body; the rest of it
          // would be taken for the next request, so this connection ends after the answer.
          refused = true;
          req.headers.erase("Connection");
          req.set_header("Connection", "close");
        }
      });
      // A head httplib could not parse (400, 414) leaves the rest of it unread, where it would be
      // taken for the next request: the connection ends after the answer.
      if (refused || !ok || !parsed) stream.linger_on_close();
      if (!ok || !parsed || refused || client_closes || stopping) return;
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  auto& opts = impl_->options;
  try {
    auto address = support::parse_host_port(opts.listen, 0);  // port 0: any free port
    impl_->host = std::move(address.host);
    impl_->configured_port = address.port;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("http listen address ") + e.what());
  }
  opts.workers = std::max(1, opts.workers);
  opts.max_queued_connections = std::max(0, opts.max_queued_connections);
  opts.keep_alive_max_requests = std::max(1, opts.keep_alive_max_requests);
  if (opts.max_connections_per_client <= 0)
    opts.max_connections_per_client = default_connections_per_client(opts.workers);

  auto& server = impl_->server;
  // Only for the Keep-Alive header httplib writes: our connection loop enforces both. Rounded down,
  // so a client that trusts the header never reuses a connection we have already closed.
  server.set_keep_alive_max_count(static_cast<std::size_t>(opts.keep_alive_max_requests));
  server.set_keep_alive_timeout(std::chrono::duration_cast<std::chrono::seconds>(opts.keep_alive_timeout).count());
  // httplib owns the queue it gets from this factory.
  server.new_task_queue = [] { return new InlineTaskQueue; };
  server.set_socket_options([impl = impl_.get()](socket_t sock) {
    httplib::default_socket_options(sock);  // SO_REUSEADDR
    impl->listen_fd = sock;
  });
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!is_get_or_head(req)) {
      set_json_error(res, 405, "method " + req.method + " not allowed: this API is read-only (GET, HEAD)");
      res.set_header("Allow", "GET, HEAD");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (announces_body(req)) {
      set_json_error(res, 413, "request bodies are not accepted");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      set_json_error(res, 500, e.what());
    } catch (...) {
      set_json_error(res, 500, "unknown error");
    }
  });
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::get(const std::string& path, HttpHandler handler) {
  // Exact match: escape regex metacharacters of the path.
  std::string pattern;
  for (const char c : path) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) pattern += '\\';
    pattern += c;
  }
  impl_->server.Get(pattern, [h = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    apply(h(to_request(req)), res);
  });
}

void HttpServer::start() {
  if (impl_->listener.joinable()) throw std::logic_error("http server already started");
  if (impl_->configured_port == 0) {
    impl_->bound_port = impl_->server.bind_to_any_port(impl_->host);
    if (impl_->bound_port <= 0) throw std::runtime_error("http: cannot bind " + impl_->options.listen);
  } else {
    if (!impl_->server.bind_to_port(impl_->host, impl_->configured_port)) {
      throw std::runtime_error("http: cannot bind " + impl_->options.listen + " (address in use or not local?)");
    }
    impl_->bound_port = impl_->configured_port;
  }
  // Linux takes a second listen() on a listening socket as a new backlog.
  if (impl_->listen_fd >= 0) ::listen(impl_->listen_fd, kListenBacklog);
  impl_->stopping = false;
  impl_->listener_done = false;
  for (int i = 0; i < impl_->options.workers; ++i) impl_->workers.emplace_back([this] { impl_->work_loop(); });
  impl_->rejecter = std::thread([this] { impl_->reject_loop(); });
  impl_->listener = std::thread([this] {
    impl_->server.listen_after_bind();
    impl_->listener_done = true;
  });
}

void HttpServer::stop() noexcept {
  if (!impl_ || !impl_->listener.joinable()) return;
  // httplib's stop() does nothing until the accept loop runs, and start() returns before it does.
  while (!impl_->listener_done) {
    if (impl_->server.is_running()) {
      impl_->server.stop();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->listener.join();
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    for (const auto& accepted : impl_->queued) {
      ::close(accepted.fd);
      impl_->release(accepted.client);
    }
    impl_->queued.clear();
    impl_->work.notify_all();
  }
  for (auto& worker : impl_->workers) worker.join();
  impl_->workers.clear();
  impl_->rejecter.join();
}

int HttpServer::port() const noexcept { return impl_->bound_port; }
const std::string& HttpServer::host() const noexcept { return impl_->host; }

}  // namespace hbingest::server
