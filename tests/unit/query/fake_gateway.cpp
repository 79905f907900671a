#include "fake_gateway.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace hbingest::query::testing {

namespace {

void put_i32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// TBinaryProtocol, strict: the reply message, then getScannerResults_result with field 0 (success)
// an empty list of TResult structs, then the struct's stop byte.
std::string empty_scan_reply() {
  std::string out;
  put_i32(out, 0x80010002u);  // VERSION_1 | T_REPLY
  const std::string name = "getScannerResults";
  put_i32(out, static_cast<std::uint32_t>(name.size()));
  out += name;
  put_i32(out, 0);            // seqid: the synchronous client sends 0 and does not check it
  out.push_back(15);          // T_LIST
  out.append("\x00\x00", 2);  // field id 0
  out.push_back(12);          // element type T_STRUCT
  put_i32(out, 0);            // no elements
  out.push_back(0);           // T_STOP
  return out;
}

}  // namespace

FakeGateway::FakeGateway(Mode mode) : mode_(mode) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("fake gateway: socket()");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("fake gateway: bind/listen on 127.0.0.1:0");
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

FakeGateway::~FakeGateway() {
  stop_ = true;
  thread_.join();
  close_connections();
  ::close(listen_fd_);
}

std::string FakeGateway::endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

void FakeGateway::close_connections() {
  const std::lock_guard lock(mutex_);
  for (const int fd : connections_) ::close(fd);
  connections_.clear();
  pending_.clear();
}

void FakeGateway::serve() {
  const std::string reply = empty_scan_reply();
  while (!stop_) {
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    {
      const std::lock_guard lock(mutex_);
      for (const int fd : connections_) fds.push_back({fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
    const std::lock_guard lock(mutex_);
    if (fds[0].revents & POLLIN) {
      if (const int fd = ::accept(listen_fd_, nullptr, nullptr); fd >= 0) {
        connections_.push_back(fd);
        ++accepted_;
      }
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      const int fd = fds[i].fd;
      // Closed by close_connections() while polling: not ours any more.
      if (!fds[i].revents || std::find(connections_.begin(), connections_.end(), fd) == connections_.end()) continue;
      char buffer[65536];
      const auto n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN)) {
        ::close(fd);
        std::erase(connections_, fd);
        std::erase(pending_, fd);
        continue;
      }
      if (n < 0) continue;
      // One request per read: the client sends each call in one flush of a few hundred bytes.
      ++requests_;
      if (mode_ == Mode::answer) pending_.push_back(fd);
    }
    if (!pending_.empty() && pending_.size() >= hold_until_.load()) {
      for (const int fd : pending_) (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      pending_.clear();
    }
  }
}

}  // namespace hbingest::query::testing
