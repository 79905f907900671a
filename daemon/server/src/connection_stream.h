#pragma once
// ConnectionStream: one accepted HTTP connection (plain or TLS) as the httplib::Stream its request
// parser reads from and its response writer writes to, under deadlines that hold for a whole
// request rather than for each read: cpp-httplib's own stream times out each recv() separately,
// so a client sending one byte every few seconds (slowloris) would keep a worker forever.
//
// The socket is non-blocking; every wait is a poll() bounded by the current deadline. Reads of a
// request stop (-1) once its head deadline has passed or `head_bytes` have been handed out, which
// the parser turns into a 400 or a dropped connection; writes stop once `write_timeout` has passed
// since the response's first byte. One instance per connection, used by one thread at a time.

#include <httplib.h>
#include <openssl/ssl.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace hbingest::server::detail {

using Clock = std::chrono::steady_clock;

class ConnectionStream final : public httplib::Stream {
 public:
  // Owns `fd` (closed by the destructor). With `tls`, handshake() must succeed before any I/O.
  // Once `stopping` is true, every wait ends within a fraction of a second and I/O fails, so a
  // slow client cannot hold up the server's stop for its write_timeout.
  ConnectionStream(int fd, std::shared_ptr<SSL_CTX> tls, std::chrono::milliseconds write_timeout,
                   const std::atomic<bool>& stopping);
  ~ConnectionStream() override;
  ConnectionStream(const ConnectionStream&) = delete;
  ConnectionStream& operator=(const ConnectionStream&) = delete;

  // The TLS handshake, done by `deadline`. False (connection unusable) on failure or timeout.
  bool handshake(Clock::time_point deadline);

  // Waits until a request's first bytes are there. False at `until`, when the peer closed, or soon
  // after stopping.
  bool wait_for_request(Clock::time_point until);

  // Starts a request: its head must arrive by `head_deadline` and be at most `head_bytes` long.
  void begin_request(Clock::time_point head_deadline, std::size_t head_bytes);

  // On close, read and drop what the client still sends for a moment first, so that the answer
  // we sent (a 405, 413 or 400 ahead of unread request bytes) reaches it instead of being
  // discarded by the TCP reset that closing with unread data causes.
  void linger_on_close() noexcept { linger_ = true; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

 private:
  struct SslFree {
    void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
  };

  // One recv()/SSL_read() into buffer_, waiting until `deadline`. >0 bytes, 0 at the end, -1 on
  // error or timeout.
  ssize_t fill(Clock::time_point deadline);
  // poll() for `events` until `deadline`; true when ready.
  bool wait(short events, Clock::time_point deadline) const;
  void drain_briefly() noexcept;
  // Marks the connection unusable; returns -1 for the caller to pass on.
  ssize_t fail() noexcept {
    failed_ = true;
    return -1;
  }

  int fd_;
  std::unique_ptr<SSL, SslFree> ssl_;
  std::chrono::milliseconds write_timeout_;
  const std::atomic<bool>& stopping_;
  std::array<char, 16 * 1024> buffer_{};
  std::size_t begin_ = 0;  // unread bytes are buffer_[begin_, end_)
  std::size_t end_ = 0;
  Clock::time_point read_deadline_{};
  std::size_t read_budget_ = 0;
  std::optional<Clock::time_point> write_deadline_;  // set by the response's first write
  bool failed_ = false;
  bool linger_ = false;
  std::string remote_ip_;
  int remote_port_ = -1;
  std::string local_ip_;
  int local_port_ = -1;
};

}  // namespace hbingest::server::detail
