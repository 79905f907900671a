#include "thrift2_connection.h"

#include "hbingest/connectors/hbase_error_policy.h"
#include "hbingest/support/host_port.h"
#include "hbingest/support/rate_limited_log.h"
#include "sasl_client_transport.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string_view>

#include <thrift/TApplicationException.h>
#include <thrift/TConfiguration.h>
#include <thrift/TOutput.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/protocol/TProtocolException.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>
#include <thrift/transport/TVirtualTransport.h>

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
// What one reply may make us allocate before its bytes arrive. Thrift reads a length and allocates
// it first, so without these the first four bytes of any answer that is not Thrift became an
// allocation ("HTTP" read as a length is 1.2 GB; an SSH banner 1.4 GB; a TLS alert 352 MB).
// No string in a reply is longer than one cell: HBase's client (in the gateway) refuses a cell
// above hbase.client.keyvalue.maxsize, 10 MiB by default; a row key is at most 32767 bytes.
constexpr std::int32_t kMaxStringBytes = 10 * 1024 * 1024;
// No list in a reply is longer than the rows of a scan chunk (query.chunk_rows is at most 100,000)
// or the cells of one row: one per field of an event, and a field takes at least 4 bytes of JSON,
// so an event within decode.max_event_bytes' default (1 MiB) has fewer fields than this.
constexpr std::int32_t kMaxListElements = 256 * 1024;
// How much of a reply's start an error message quotes.
constexpr std::size_t kReplyStartBytes = 16;

std::string quote_bytes(std::string_view bytes) {
  std::string quoted;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\' && c != '\'') {
      quoted.push_back(c);
    } else {
      std::array<char, 5> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02x", byte);
      quoted += hex.data();
    }
  }
  return quoted;
}

// What kind of server usually answers with these bytes, in the terms of our options.
std::string guess_peer(std::string_view start) {
  if (start.starts_with("HTTP") || start.starts_with("<")) {
    return "an HTTP server answered: a gateway in HTTP mode (hbase.regionserver.thrift.http), a proxy or a sidecar";
  }
  if (start.size() >= 2 && (start[0] == 0x15 || start[0] == 0x16) && start[1] == 0x03) {
    return "a TLS record: the endpoint expects TLS (hbase.tls.enabled)";
  }
  if (start.starts_with("SSH-")) return "an SSH server answered: is the port right?";
  // Java's TSaslServerTransport reads our first byte as a SASL status and answers ERROR (4) or
  // BAD (3) with a 4-byte length and its message ("Invalid status -128").
  if (start.size() >= 5 && (start[0] == 3 || start[0] == 4) && start[1] == 0 && start[2] == 0) {
    return "a SASL server answered ('" + quote_bytes(start.substr(5)) +
           "...'): the gateway requires Kerberos (its hbase.thrift.security.qop is set); configure hbase.sasl";
  }
  return "check hbase.endpoints, and that hbase.transport and hbase.protocol match the gateway";
}

}  // namespace

// Remembers the first bytes the peer sent after our last request, for foreign_reply(). It sits
// between the socket and the buffered or framed transport, so it sees their large reads (one per
// buffer fill or frame), not the protocol's small ones.
class ReplyStartRecorder final : public apache::thrift::transport::TVirtualTransport<ReplyStartRecorder> {
 public:
  ReplyStartRecorder(std::shared_ptr<apache::thrift::transport::TTransport> socket,
                     const std::shared_ptr<TConfiguration>& config)
      : TVirtualTransport(config), socket_(std::move(socket)) {}

  bool isOpen() const override { return socket_->isOpen(); }
  bool peek() override { return socket_->peek(); }
  void open() override { socket_->open(); }
  void close() override { socket_->close(); }
  void flush() override { socket_->flush(); }
  const std::string getOrigin() const override { return socket_->getOrigin(); }

  uint32_t read(uint8_t* buf, uint32_t len) {
    const uint32_t got = socket_->read(buf, len);
    const std::size_t keep = std::min<std::size_t>(got, kReplyStartBytes - start_.size());
    start_.append(reinterpret_cast<const char*>(buf), keep);
    return got;
  }
  void write(const uint8_t* buf, uint32_t len) {
    start_.clear();  // a new request: what follows is its reply
    socket_->write(buf, len);
  }

  std::string_view reply_start() const { return start_; }

 private:
  std::shared_ptr<apache::thrift::transport::TTransport> socket_;
  std::string start_;
};

namespace {

// Thrift reports socket trouble (a refused connect, a reset, a TLS failure) through GlobalOutput,
// which prints plain text to stderr: that broke logging.format json exactly during an outage. The
// same failure also reaches us as an exception, so a repeat within the interval adds nothing.
void log_thrift_output(const char* message) noexcept {
  try {
    static support::RateLimitedLog limited(std::chrono::seconds(10));
    limited.log(spdlog::level::warn, message, std::string("thrift: ") + message);
  } catch (...) {
    // Logging must never throw into Thrift's error paths.
  }
}

void route_thrift_output_to_spdlog() {
  static std::once_flag routed;
  std::call_once(routed, [] { apache::thrift::GlobalOutput.setOutputFunction(&log_thrift_output); });
}

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
  route_thrift_output_to_spdlog();  // before the first socket or TLS context is made
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
  recorder_.reset();
}

std::string Thrift2Connection::foreign_reply() const {
  // Over SASL the handshake has told what answers; its frames hold wrapped bytes.
  if (!recorder_ || options_.sasl.enabled) return {};
  const std::string_view start = recorder_->reply_start();
  std::string_view message = start;
  bool foreign = false;
  if (options_.transport == ThriftTransportKind::framed) {
    if (start.size() < 4) return {};
    const std::uint32_t frame = (std::uint32_t{static_cast<unsigned char>(start[0])} << 24) |
                                (std::uint32_t{static_cast<unsigned char>(start[1])} << 16) |
                                (std::uint32_t{static_cast<unsigned char>(start[2])} << 8) |
                                std::uint32_t{static_cast<unsigned char>(start[3])};
    foreign = frame == 0 || frame > static_cast<std::uint32_t>(kMaxFrameBytes);
    message = start.substr(4);
  }
  const bool binary = options_.protocol == ThriftProtocolKind::binary;
  if (!foreign && !message.empty()) {
    const auto first = static_cast<unsigned char>(message[0]);
    // Binary: the version word 0x8001 (strict); compact: the protocol id 0x82.
    foreign = binary ? first != 0x80 || (message.size() > 1 && message[1] != 0x01) : first != 0x82;
  }
  if (!foreign) return {};
  return std::string("not a Thrift ") + (binary ? "binary" : "compact") + " reply (starts with '" + quote_bytes(start) +
         "'): " + guess_peer(start);
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
    socket->setConfiguration(config);  // the factory makes its sockets with Thrift's defaults
  } else {
    socket = std::make_shared<transport::TSocket>(hp.host, hp.port, config);
  }
  socket->setConnTimeout(static_cast<int>(options_.connect_timeout.count()));
  socket->setRecvTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setSendTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setNoDelay(true);

  auto recorder = std::make_shared<ReplyStartRecorder>(socket, config);
  std::shared_ptr<transport::TTransport> transport;
  if (options_.sasl.enabled) {
    // SASL frames take the place of Thrift's framed or buffered transport (HBase's gateways speak
    // SASL over the buffered one only; config refuses framed with it).
    const std::string& principal_host = options_.sasl.server_host.empty() ? hp.host : options_.sasl.server_host;
    transport = std::make_shared<SaslClientTransport>(
        recorder, make_gssapi_mechanism(options_.sasl, principal_host, endpoint()),
        describe_sasl_link(options_.sasl, principal_host, endpoint()), options_.sasl.qop,
        static_cast<std::size_t>(kMaxFrameBytes), config);
  } else if (options_.transport == ThriftTransportKind::framed) {
    transport = std::make_shared<transport::TFramedTransport>(recorder, config);
  } else {
    transport = std::make_shared<transport::TBufferedTransport>(recorder, kReadBufferBytes, kWriteBufferBytes, config);
  }
  std::shared_ptr<protocol::TProtocol> protocol;
  if (options_.protocol == ThriftProtocolKind::binary) {
    // Strict read: a reply must start with the version word (0x8001), so a peer that is not a
    // Thrift binary server fails on its first four bytes instead of having them read as a length.
    protocol = std::make_shared<protocol::TBinaryProtocol>(transport, kMaxStringBytes, kMaxListElements,
                                                           /*strict_read=*/true, /*strict_write=*/true);
  } else {
    // The compact protocol checks its protocol id byte on every reply already.
    protocol = std::make_shared<protocol::TCompactProtocol>(transport, kMaxStringBytes, kMaxListElements);
  }
  const auto publish_socket = [&] {
    const std::lock_guard lock(interrupt_mutex_);
    socket_fd_ = socket->getSocketFD();
    // interrupt() came while connecting: the call it meant is this one.
    if (interrupted_) ::shutdown(socket_fd_, SHUT_RDWR);
  };
  if (options_.sasl.enabled) {
    // The socket first, so that interrupt() can cut a handshake short as it cuts a call. A failed
    // handshake leaves the socket open: disconnect() closes it, under interrupt_mutex_.
    recorder->open();
    recorder_ = recorder;
    transport_ = transport;
    publish_socket();
    transport->open();
  } else {
    transport->open();
    publish_socket();
    recorder_ = std::move(recorder);
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
  } catch (const apache::thrift::protocol::TProtocolException& e) {
    // Strict read or a size limit refused the reply: say what answered when it was not Thrift.
    const std::string foreign = foreign_reply();
    disconnect();
    throw HBaseError("Thrift2 reply to " + std::string(operation) + " from " + where + ": " +
                         (foreign.empty() ? std::string("refused by Thrift: ") + e.what() : foreign),
                     where, operation, true);
  } catch (const SaslHandshakeError& e) {
    // Like a failed TLS handshake: the same until credentials, the gateway or the configuration
    // change, so retriable (a running daemon recovers once they do) while a startup check stops.
    disconnect();
    if (options_.endpoints.size() > 1) {
      endpoint_index_ = (endpoint_index_ + 1) % options_.endpoints.size();
      ++failovers_;
    }
    throw HBaseError(std::string(e.what()) + " (during " + operation + ")", where, operation, true);
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
    // A framed transport reads a frame size first: an answer that is not Thrift fails here.
    const std::string foreign = foreign_reply();
    disconnect();
    if (options_.endpoints.size() > 1) {
      endpoint_index_ = (endpoint_index_ + 1) % options_.endpoints.size();
      ++failovers_;
    }
    throw HBaseError("Thrift2 transport error during " + std::string(operation) + " on " + where + ": " +
                         (foreign.empty() ? std::string(e.what()) : foreign + " [" + e.what() + "]"),
                     where, operation, true);
  } catch (const apache::thrift::TException& e) {
    // Protocol or application errors leave the stream in an unknown state: reconnect next time.
    disconnect();
    throw HBaseError("Thrift2 error during " + std::string(operation) + " on " + where + ": " + e.what(), where,
                     operation, true);
  }
}

}  // namespace hbingest::connectors
