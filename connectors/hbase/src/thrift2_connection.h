#pragma once
// One connection to a Thrift2 gateway: socket + transport + protocol + generated client.
// The only place where Thrift exceptions become HBaseError (with endpoint and operation).
// Not thread-safe: the generated client interleaves one request/response at a time.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "THBaseService.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/thrift2_options.h"

namespace apache::thrift::transport {
class TSSLSocketFactory;
}

namespace hbingest::connectors {

class ReplyStartRecorder;

class Thrift2Connection {
 public:
  // Connects lazily, starting at endpoints[first_endpoint % size]. With options.tls.enabled the
  // CA, certificate and key files are loaded here: a file that cannot be read throws HBaseError
  // (not retriable) naming the hbase.tls option.
  Thrift2Connection(Thrift2Options options, std::size_t first_endpoint = 0);
  ~Thrift2Connection();
  Thrift2Connection(const Thrift2Connection&) = delete;
  Thrift2Connection& operator=(const Thrift2Connection&) = delete;

  // Runs `call` against the generated client, connecting first if needed. Any failure is rethrown
  // as HBaseError naming the endpoint and `operation`. After a transport failure the connection is
  // dropped and the next call connects to the next endpoint (failover).
  template <typename Fn>
  auto call(const char* operation, Fn&& fn) -> decltype(fn(std::declval<thrift2::gen::THBaseServiceClient&>()));

  const std::string& endpoint() const { return options_.endpoints[endpoint_index_]; }
  bool connected() const { return client_ != nullptr; }
  void disconnect() noexcept;
  // Thread-safe, for another thread than the one in call(): shuts the socket down so that a call
  // blocked on it fails at once (a transport error) instead of after hbase.read_timeout. A call
  // still connecting fails as soon as its socket is open (so within hbase.connect_timeout), and so
  // does every later call: throw the connection away.
  void interrupt() noexcept;
  // Number of failovers to another endpoint since construction (for metrics).
  std::size_t failovers() const { return failovers_; }

 private:
  void connect();
  [[noreturn]] void rethrow_as_hbase_error(const char* operation);
  // "not a Thrift binary reply (starts with 'HTTP/1.1 503')" when the bytes the peer answered
  // with cannot begin a Thrift reply; empty when they can, or nothing was read.
  std::string foreign_reply() const;

  static constexpr std::chrono::seconds kIdleReconnect{30};

  Thrift2Options options_;
  // Every socket of this connection is made by connect(): plain TCP, or TLS from this factory.
  std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls_;
  std::size_t endpoint_index_ = 0;
  std::chrono::steady_clock::time_point last_used_{};
  std::size_t failovers_ = 0;
  // Whether a call on the open connection has returned: a first call that gets no answer at all is
  // what a kerberized gateway does to a client without SASL (libthrift 0.14 there neither answers
  // nor closes).
  bool answered_ = false;
  // The open socket's descriptor for interrupt(), and whether one was asked for (for good: an
  // interrupted connection is not used again). Guarded by interrupt_mutex_, held while the socket
  // is closed, so that interrupt() never shuts down a descriptor number handed out again.
  std::mutex interrupt_mutex_;
  int socket_fd_ = -1;
  bool interrupted_ = false;
  // Declared in destruction order: the client uses the protocol, which uses the transport, which
  // reads the socket through the recorder.
  std::shared_ptr<ReplyStartRecorder> recorder_;
  std::shared_ptr<apache::thrift::transport::TTransport> transport_;
  std::unique_ptr<thrift2::gen::THBaseServiceClient> client_;
};

template <typename Fn>
auto Thrift2Connection::call(const char* operation, Fn&& fn)
    -> decltype(fn(std::declval<thrift2::gen::THBaseServiceClient&>())) {
  try {
    const auto now = std::chrono::steady_clock::now();
    // HBase's Thrift servers drop connections idle for 60 s; a call on such a socket fails after
    // the request may or may not have been read. Reconnecting first keeps every call unambiguous.
    if (client_ && now - last_used_ > kIdleReconnect) disconnect();
    if (!client_) connect();
    last_used_ = now;
    // Marks the connection as answered once a call returns (not when it throws).
    struct MarkAnswered {
      bool& answered;
      int exceptions = std::uncaught_exceptions();
      ~MarkAnswered() {
        if (std::uncaught_exceptions() == exceptions) answered = true;
      }
    } mark{answered_};
    return fn(*client_);
  } catch (...) {
    rethrow_as_hbase_error(operation);
  }
}

}  // namespace hbingest::connectors
