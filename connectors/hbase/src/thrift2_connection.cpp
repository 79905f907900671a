#include "thrift2_connection.h"

#include "hbingest/connectors/hbase_error_policy.h"
#include "hbingest/support/host_port.h"

#include <sys/socket.h>

#include <cstdint>
#include <optional>

#include <thrift/TApplicationException.h>
#include <thrift/TConfiguration.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

namespace hbingest::connectors {

namespace {

using apache::thrift::TConfiguration;
using apache::thrift::transport::TTransportException;

// Big batches (2 MiB by default) and scan chunks must fit one frame; Thrift's default is 16 MB.
constexpr int kMaxMessageBytes = 256 * 1024 * 1024;
constexpr int kMaxFrameBytes = 256 * 1024 * 1024;
// Thrift's buffered transport sends whenever its write buffer fills, 512 bytes by default: a
// 500-row putMultiple (~170 KB) took ~350 send() calls, a fifth of the daemon's CPU time in perf
// (bench/README.md, "CPU per event"). 64 KiB sends a batch in a few calls. Reads likewise: a scan
// chunk of 1,000 rows is ~0.5 MB, ~1,000 recv() calls through a 512-byte buffer.
constexpr std::uint32_t kReadBufferBytes = 64 * 1024;
constexpr std::uint32_t kWriteBufferBytes = 64 * 1024;

support::HostPort parse_endpoint(const std::string& endpoint) {
  try {
    return support::parse_host_port(endpoint);
  } catch (const std::invalid_argument& e) {
    throw HBaseError(std::string("invalid Thrift2 endpoint ") + e.what(), endpoint, "connect", false);
  }
}

// verify_hostname: false. Thrift's factory checks names with DefaultClientAccessManager unless told
// otherwise; this one accepts any peer whose chain OpenSSL verified (authenticate(true) below).
class ChainOnlyAccessManager final : public apache::thrift::transport::AccessManager {
 public:
  Decision verify(const sockaddr_storage&) noexcept override { return ALLOW; }
};

// The TLS client context: chain verification always, the host name unless switched off. Loading
// problems (missing file, a key that does not match the certificate) are configuration errors.
std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> make_tls_factory(const Thrift2TlsOptions& tls) {
  using apache::thrift::transport::TSSLSocketFactory;
  auto factory = std::make_shared<TSSLSocketFactory>(apache::thrift::transport::TLSv1_2);
  const auto load = [](const char* option, const std::string& file, auto&& loader) {
    try {
      loader();
    } catch (const apache::thrift::TException& e) {
      throw HBaseError(std::string("hbase.tls.") + option + " '" + file + "': " + e.what(), "", "connect", false);
    }
  };
  load("ca_file", tls.ca_file, [&] { factory->loadTrustedCertificates(tls.ca_file.c_str()); });
  if (!tls.cert_file.empty()) {
    load("cert_file", tls.cert_file, [&] { factory->loadCertificate(tls.cert_file.c_str()); });
    load("key_file", tls.key_file, [&] { factory->loadPrivateKey(tls.key_file.c_str()); });
  }
  factory->authenticate(true);  // the gateway must present a certificate that verifies against ca_file
  if (tls.verify_hostname) {
    factory->access(std::make_shared<apache::thrift::transport::DefaultClientAccessManager>());
  } else {
    factory->access(std::make_shared<ChainOnlyAccessManager>());
  }
  return factory;
}

// What a failed handshake means, in the terms of our options. Thrift's messages come from OpenSSL
// ("certificate verify failed") or from its own name check ("access denied").
std::string explain_tls_failure(const std::string& message, const Thrift2TlsOptions& tls, const std::string& host) {
  // "authorize: access denied" / "authorize: cannot authorize peer": Thrift's AccessManager found
  // no subjectAltName (or CN) matching the host.
  if (message.find("authorize") != std::string::npos) {
    return "the gateway's certificate does not name host '" + host +
           "' (hbase.tls.verify_hostname: the endpoint's host must be in its subjectAltName)";
  }
  if (message.find("verify failed") != std::string::npos || message.find("verify_result") != std::string::npos) {
    return "the gateway's certificate does not verify against hbase.tls.ca_file '" + tls.ca_file +
           "' (wrong CA, expired or not yet valid)";
  }
  return "TLS handshake failed (is the endpoint a TLS terminator? hbase.tls.enabled)";
}

}  // namespace

Thrift2Connection::Thrift2Connection(Thrift2Options options, std::size_t first_endpoint)
    : options_(std::move(options)) {
  if (options_.endpoints.empty()) {
    throw HBaseError("no Thrift2 endpoints configured", "", "connect", false);
  }
  endpoint_index_ = first_endpoint % options_.endpoints.size();
  if (options_.tls.enabled) tls_ = make_tls_factory(options_.tls);
}

Thrift2Connection::~Thrift2Connection() { disconnect(); }

void Thrift2Connection::disconnect() noexcept {
  client_.reset();
  const std::lock_guard lock(interrupt_mutex_);
  socket_fd_ = -1;
  if (transport_) {
    try {
      transport_->close();
    } catch (...) {
      // Closing a broken socket can throw; there is nothing left to release.
    }
    transport_.reset();
  }
}

void Thrift2Connection::interrupt() noexcept {
  const std::lock_guard lock(interrupt_mutex_);
  interrupted_ = true;
  // shutdown(), not close(): the descriptor stays ours until disconnect() closes it, and a thread
  // blocked in recv() or send() on it returns at once.
  if (socket_fd_ >= 0) ::shutdown(socket_fd_, SHUT_RDWR);
}

void Thrift2Connection::connect() {
  using namespace apache::thrift;
  const support::HostPort hp = parse_endpoint(endpoint());
  auto config = std::make_shared<TConfiguration>(kMaxMessageBytes, kMaxFrameBytes);
  // The one place a socket to a gateway is made (writers, scanners and admin all connect here).
  std::shared_ptr<transport::TSocket> socket;
  if (tls_) {
    socket = tls_->createSocket(hp.host, hp.port);
  } else {
    socket = std::make_shared<transport::TSocket>(hp.host, hp.port, config);
  }
  socket->setConnTimeout(static_cast<int>(options_.connect_timeout.count()));
  socket->setRecvTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setSendTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setNoDelay(true);

  std::shared_ptr<transport::TTransport> transport;
  if (options_.transport == ThriftTransportKind::framed) {
    transport = std::make_shared<transport::TFramedTransport>(socket, config);
  } else {
    transport = std::make_shared<transport::TBufferedTransport>(socket, kReadBufferBytes, kWriteBufferBytes, config);
  }
  std::shared_ptr<protocol::TProtocol> protocol;
  if (options_.protocol == ThriftProtocolKind::binary) {
    protocol = std::make_shared<protocol::TBinaryProtocol>(transport);
  } else {
    protocol = std::make_shared<protocol::TCompactProtocol>(transport);
  }
  transport->open();
  {
    const std::lock_guard lock(interrupt_mutex_);
    socket_fd_ = socket->getSocketFD();
    // interrupt() came while connecting: the call it meant is this one.
    if (interrupted_) ::shutdown(socket_fd_, SHUT_RDWR);
  }
  transport_ = std::move(transport);
  client_ = std::make_unique<thrift2::gen::THBaseServiceClient>(protocol);
}

void Thrift2Connection::rethrow_as_hbase_error(const char* operation) {
  const std::string where = endpoint();
  try {
    throw;
  } catch (const HBaseError&) {
    disconnect();
    throw;
  } catch (const thrift2::gen::TIOError& e) {
    // The server answered: the connection is fine, the operation failed inside HBase.
    const std::string message = e.__isset.message ? e.message : std::string("TIOError without message");
    GatewayFailure failure{GatewayFailure::Kind::io_error, std::nullopt, 0, message};
    if (e.__isset.canRetry) failure.can_retry = e.canRetry;
    throw HBaseError("HBase " + std::string(operation) + " via " + where + " failed: " + message, where, operation,
                     is_retriable(failure));
  } catch (const thrift2::gen::TIllegalArgument& e) {
    throw HBaseError("HBase " + std::string(operation) + " via " + where + " rejected an argument: " + e.message, where,
                     operation, is_retriable({GatewayFailure::Kind::illegal_argument, std::nullopt, 0, e.message}));
  } catch (const apache::thrift::TApplicationException& e) {
    // A reply was read; which types mean "the data was refused" is decided in hbase_error_policy.cpp.
    const bool retriable =
        is_retriable({GatewayFailure::Kind::application_error, std::nullopt, static_cast<int>(e.getType()), e.what()});
    // An RPC-level failure (out of sequence, protocol error) may leave the stream out of step.
    if (retriable) disconnect();
    throw HBaseError("HBase " + std::string(operation) + " via " + where + " failed inside the gateway: " + e.what() +
                         " (see the Thrift2 server log)",
                     where, operation, retriable);
  } catch (const apache::thrift::transport::TSSLException& e) {
    // A handshake that failed fails the same way on every retry until the certificate, the CA or
    // the configuration changes; still retriable, so that a running daemon recovers once it does
    // (its writers back off and /readyz says so), while a startup check stops on it.
    disconnect();
    if (options_.endpoints.size() > 1) {
      endpoint_index_ = (endpoint_index_ + 1) % options_.endpoints.size();
      ++failovers_;
    }
    const std::string host = support::parse_host_port(where).host;
    throw HBaseError("TLS to Thrift2 gateway " + where + " failed during " + std::string(operation) + ": " +
                         explain_tls_failure(e.what(), options_.tls, host) + " [" + e.what() + "]",
                     where, operation, true);
  } catch (const TTransportException& e) {
    disconnect();
    if (options_.endpoints.size() > 1) {
      endpoint_index_ = (endpoint_index_ + 1) % options_.endpoints.size();
      ++failovers_;
    }
    throw HBaseError("Thrift2 transport error during " + std::string(operation) + " on " + where + ": " + e.what(),
                     where, operation, true);
  } catch (const apache::thrift::TException& e) {
    // Protocol or application errors leave the stream in an unknown state: reconnect next time.
    disconnect();
    throw HBaseError("Thrift2 error during " + std::string(operation) + " on " + where + ": " + e.what(), where,
                     operation, true);
  }
}

}  // namespace hbingest::connectors
