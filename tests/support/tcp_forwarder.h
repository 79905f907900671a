#pragma once
// A loopback TCP forwarder for tests: listens on `listen_host` (e.g. "::1") at an ephemeral port
// and relays every connection to `target_host:target_port`. Lets a test reach a server that binds
// 127.0.0.1 through another address family, without touching the server. Stops and joins in its
// destructor.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace hbingest::testing {

class TcpForwarder {
 public:
  TcpForwarder(const std::string& listen_host, const std::string& target_host, int target_port);
  ~TcpForwarder();
  TcpForwarder(const TcpForwarder&) = delete;
  TcpForwarder& operator=(const TcpForwarder&) = delete;

  int port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  void accept_loop();
  void relay(int client);

  std::string target_host_;
  int target_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::vector<std::thread> relays_;
  std::thread acceptor_;  // last: started after everything it uses exists
};

}  // namespace hbingest::testing
