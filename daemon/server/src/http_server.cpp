#include "hbingest/server/http_server.h"

#include "hbingest/support/host_port.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

namespace hbingest::server {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

HttpRequest to_request(const httplib::Request& req) {
  HttpRequest out;
  out.path = req.path;
  for (const auto& [name, value] : req.params) out.params.emplace_back(name, value);
  for (const auto& [name, value] : req.headers) out.headers.emplace(lower(name), value);
  out.remote_addr = req.remote_addr;
  return out;
}

void apply(const HttpResponse& from, httplib::Response& to) {
  to.status = from.status;
  for (const auto& [name, value] : from.headers) to.set_header(name, value);
  to.set_content(from.body, from.content_type);
}

void set_json_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump(), "application/json");
}

}  // namespace

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  const auto it = headers.find(lower(name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

struct HttpServer::Impl {
  HttpServerOptions options;
  std::string host;
  int configured_port = 0;
  int bound_port = 0;
  httplib::Server server;
  std::atomic<bool> listener_done{false};
  std::thread listener;  // last: joined in stop() before the server goes
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  try {
    auto address = support::parse_host_port(impl_->options.listen, 0);  // port 0: any free port
    impl_->host = std::move(address.host);
    impl_->configured_port = address.port;
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("http listen address ") + e.what());
  }
  const auto threads = static_cast<std::size_t>(std::max(1, impl_->options.threads));
  // httplib owns the queue it gets from this factory.
  impl_->server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl_->server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
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
  impl_->listener_done = false;
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
}

int HttpServer::port() const noexcept { return impl_->bound_port; }
const std::string& HttpServer::host() const noexcept { return impl_->host; }

}  // namespace hbingest::server
