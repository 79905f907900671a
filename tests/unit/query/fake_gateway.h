#pragma once
// A Thrift2 gateway on a real loopback TCP socket that knows one answer: an empty
// getScannerResults reply (buffered transport, strict binary protocol). Enough to drive the real
// Thrift2 scanner and its connection pool through what a gateway does to them: restart (close
// every connection), or accept and never answer.

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hbingest::query::testing {

class FakeGateway {
 public:
  enum class Mode { answer, silent };

  explicit FakeGateway(Mode mode);
  ~FakeGateway();
  FakeGateway(const FakeGateway&) = delete;
  FakeGateway& operator=(const FakeGateway&) = delete;

  std::string endpoint() const;  // "127.0.0.1:<port>"
  // Answers only once at least `n` requests wait (then all of them): makes a client hold n
  // connections at once.
  void answer_when_pending(std::size_t n) { hold_until_.store(n); }
  // What a gateway restart does to its clients' sockets: closes every accepted connection.
  void close_connections();
  int accepted() const { return accepted_.load(); }
  int requests() const { return requests_.load(); }

 private:
  void serve();

  Mode mode_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> hold_until_{1};
  std::atomic<int> accepted_{0};
  std::atomic<int> requests_{0};
  std::mutex mutex_;  // guards connections_ and pending_
  std::vector<int> connections_;
  std::vector<int> pending_;  // connections with a request not answered yet
  std::thread thread_;        // last: joined before the members above go
};

}  // namespace hbingest::query::testing
