#include "tcp_forwarder.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>

namespace hbingest::testing {

namespace {

int connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

}  // namespace

TcpForwarder::TcpForwarder(const std::string& listen_host, const std::string& target_host, int target_port)
    : target_host_(target_host), target_port_(target_port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* found = nullptr;
  if (getaddrinfo(listen_host.c_str(), "0", &hints, &found) != 0)
    throw std::runtime_error("forwarder: bad host " + listen_host);
  listener_ = socket(found->ai_family, SOCK_STREAM, 0);
  const bool bound =
      listener_ >= 0 && bind(listener_, found->ai_addr, found->ai_addrlen) == 0 && listen(listener_, 16) == 0;
  freeaddrinfo(found);
  if (!bound) throw std::runtime_error("forwarder: cannot listen on " + listen_host + ": " + std::strerror(errno));
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpForwarder::~TcpForwarder() {
  stopping_ = true;
  shutdown(listener_, SHUT_RDWR);
  acceptor_.join();
  for (auto& relay : relays_) relay.join();
  close(listener_);
}

void TcpForwarder::accept_loop() {
  while (!stopping_) {
    pollfd pfd{listener_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    ++connections_;
    relays_.emplace_back([this, client] { relay(client); });
  }
}

void TcpForwarder::relay(int client) {
  const int upstream = connect_to(target_host_, target_port_);
  std::array<pollfd, 2> fds{pollfd{client, POLLIN, 0}, pollfd{upstream, POLLIN, 0}};
  std::array<char, 64 * 1024> buffer{};
  while (upstream >= 0 && !stopping_) {
    if (poll(fds.data(), fds.size(), 100) <= 0) continue;
    bool closed = false;
    for (std::size_t i = 0; i < fds.size() && !closed; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
      closed = n <= 0 || write(fds[1 - i].fd, buffer.data(), static_cast<std::size_t>(n)) != n;
    }
    if (closed) break;
  }
  if (upstream >= 0) close(upstream);
  close(client);
}

}  // namespace hbingest::testing
