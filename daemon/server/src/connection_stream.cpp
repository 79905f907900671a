#include "connection_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hbingest::server::detail {

namespace {

constexpr auto kStopCheck = std::chrono::milliseconds(200);  // how soon a waiting worker sees stop()
constexpr auto kLingerTime = std::chrono::milliseconds(500);
constexpr std::size_t kLingerBytes = 1024 * 1024;

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

}  // namespace

ConnectionStream::ConnectionStream(int fd, std::shared_ptr<SSL_CTX> tls, std::chrono::milliseconds write_timeout,
                                   const std::atomic<bool>& stopping)
    : fd_(fd), write_timeout_(write_timeout), stopping_(stopping) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  // httplib writes a response's head and body separately: with Nagle the body waits for the
  // client's delayed ACK of the head, 40 ms on every keep-alive response after the first.
  const int on = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  address_of(fd_, true, remote_ip_, remote_port_);
  address_of(fd_, false, local_ip_, local_port_);
  if (tls) {
    ssl_.reset(SSL_new(tls.get()));  // takes its own reference on the context
    if (!ssl_ || SSL_set_fd(ssl_.get(), fd_) != 1) failed_ = true;
  }
}

ConnectionStream::~ConnectionStream() {
  if (ssl_ && !failed_) SSL_shutdown(ssl_.get());  // close_notify, best effort: never waits
  if (linger_) drain_briefly();
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
}

void ConnectionStream::drain_briefly() noexcept {
  ::shutdown(fd_, SHUT_WR);
  const auto until = Clock::now() + kLingerTime;
  std::array<char, 16 * 1024> scratch{};
  std::size_t drained = 0;
  while (drained < kLingerBytes && wait(POLLIN, until)) {
    const ssize_t n = ::recv(fd_, scratch.data(), scratch.size(), 0);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) return;
    if (n > 0) drained += static_cast<std::size_t>(n);
  }
}

bool ConnectionStream::wait(short events, Clock::time_point deadline) const {
  for (;;) {
    if (stopping_.load()) return false;
    const auto slice = std::min(deadline, Clock::now() + kStopCheck);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(slice - Clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, events, 0};
    const int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
    if (rc == 0 && slice >= deadline) return false;
  }
}

bool ConnectionStream::handshake(Clock::time_point deadline) {
  if (!ssl_ || failed_) return false;
  for (;;) {
    const int rc = SSL_accept(ssl_.get());
    if (rc == 1) return true;
    const int error = SSL_get_error(ssl_.get(), rc);
    const bool waited = error == SSL_ERROR_WANT_READ    ? wait(POLLIN, deadline)
                        : error == SSL_ERROR_WANT_WRITE ? wait(POLLOUT, deadline)
                                                        : false;
    if (!waited) {
      // A plain-HTTP client, a wrong CA on its side, or a stalled handshake: nothing to answer.
      failed_ = true;
      return false;
    }
  }
}

bool ConnectionStream::wait_for_request(Clock::time_point until) {
  if (failed_) return false;
  if (begin_ < end_ || (ssl_ && SSL_pending(ssl_.get()) > 0)) return true;
  return wait(POLLIN, until);
}

void ConnectionStream::begin_request(Clock::time_point head_deadline, std::size_t head_bytes) {
  read_deadline_ = head_deadline;
  read_budget_ = head_bytes;
  write_deadline_.reset();
}

ssize_t ConnectionStream::fill(Clock::time_point deadline) {
  begin_ = end_ = 0;
  for (;;) {
    if (failed_) return -1;
    if (ssl_) {
      const int n = SSL_read(ssl_.get(), buffer_.data(), static_cast<int>(buffer_.size()));
      if (n > 0) {
        end_ = static_cast<std::size_t>(n);
        return n;
      }
      const int error = SSL_get_error(ssl_.get(), n);
      if (error == SSL_ERROR_ZERO_RETURN) return 0;
      const bool waited = error == SSL_ERROR_WANT_READ    ? wait(POLLIN, deadline)
                          : error == SSL_ERROR_WANT_WRITE ? wait(POLLOUT, deadline)
                                                          : false;
      if (!waited) return fail();
    } else {
      const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
      if (n > 0) {
        end_ = static_cast<std::size_t>(n);
        return n;
      }
      if (n == 0) return 0;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return fail();
      if (!wait(POLLIN, deadline)) return -1;
    }
  }
}

bool ConnectionStream::is_readable() const {
  if (begin_ < end_ || (ssl_ && SSL_pending(ssl_.get()) > 0)) return true;
  return !failed_ && wait(POLLIN, read_deadline_);
}

bool ConnectionStream::is_writable() const { return !failed_ && (!write_deadline_ || Clock::now() < *write_deadline_); }

ssize_t ConnectionStream::read(char* ptr, std::size_t size) {
  if (read_budget_ == 0) return -1;  // the head is over max_header_bytes
  if (begin_ == end_) {
    const ssize_t n = fill(read_deadline_);
    if (n <= 0) return n;
  }
  const std::size_t count = std::min({size, end_ - begin_, read_budget_});
  std::memcpy(ptr, buffer_.data() + begin_, count);
  begin_ += count;
  read_budget_ -= count;
  return static_cast<ssize_t>(count);
}

ssize_t ConnectionStream::write(const char* ptr, std::size_t size) {
  if (!write_deadline_) write_deadline_ = Clock::now() + write_timeout_;
  std::size_t written = 0;
  while (written < size) {
    if (failed_) return -1;
    const std::size_t left = size - written;
    if (ssl_) {
      const int n = SSL_write(ssl_.get(), ptr + written, static_cast<int>(std::min<std::size_t>(left, 1 << 20)));
      if (n > 0) {
        written += static_cast<std::size_t>(n);
        continue;
      }
      const int error = SSL_get_error(ssl_.get(), n);
      const bool waited = error == SSL_ERROR_WANT_WRITE  ? wait(POLLOUT, *write_deadline_)
                          : error == SSL_ERROR_WANT_READ ? wait(POLLIN, *write_deadline_)
                                                         : false;
      if (!waited) return fail();
    } else {
      const ssize_t n = ::send(fd_, ptr + written, left, MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLOUT, *write_deadline_)) continue;
      return fail();
    }
  }
  return static_cast<ssize_t>(size);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = remote_ip_;
  port = remote_port_;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = local_ip_;
  port = local_port_;
}

}  // namespace hbingest::server::detail
