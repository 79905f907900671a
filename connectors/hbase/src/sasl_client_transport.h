#pragma once
// Thrift over SASL, as Java's TSaslClientTransport speaks it to HBase's Thrift servers
// (TSaslServerTransport): a negotiation of status + length + payload messages (sasl_frame.h),
// then every flush as one or more length-prefixed frames, wrapped (signed or encrypted) by the
// negotiated security layer. The mechanism (sasl_mechanism.h) does the cryptography: cyrus-sasl's
// GSSAPI with MIT Kerberos (make_gssapi_mechanism), credentials from Thrift2SaslOptions::ccache.
//
// Sits directly under the protocol (it buffers writes until flush() and reads whole frames), above
// the socket, plain or TLS. Not thread-safe, like every Thrift transport.

#include <cstdint>
#include <memory>
#include <string>

#include <thrift/transport/TTransportException.h>
#include <thrift/transport/TVirtualTransport.h>

#include "hbingest/connectors/thrift2_options.h"
#include "sasl_mechanism.h"

namespace hbingest::connectors {

// The handshake failed: the message is one line naming the link (endpoint, principals) and the
// cause (the gateway's own BAD/ERROR text, cyrus-sasl's and GSSAPI's detail, or what answered).
class SaslHandshakeError : public apache::thrift::transport::TTransportException {
 public:
  explicit SaslHandshakeError(const std::string& message) : TTransportException(UNKNOWN, message) {}
};

// Starts cyrus-sasl's client side once per process (idempotent, thread-safe). The first GSSAPI
// mechanism calls it; a process that also starts librdkafka's cyrus-sasl (Kafka GSSAPI) should
// call it first, at start-up, before other threads: sasl_client_init must not run concurrently.
// Throws std::runtime_error if cyrus-sasl cannot start.
void init_sasl_client();

// "Kerberos (SASL GSSAPI) to Thrift2 gateway H:P as 'p@R' for hbase/host": how messages name a link.
std::string describe_sasl_link(const Thrift2SaslOptions& options, const std::string& principal_host,
                               const std::string& endpoint);

// cyrus-sasl's GSSAPI for `options.service`/`principal_host`, credentials from options.ccache
// (for options.principal when set). The factory first checks that krb5.conf keeps the host as
// written (no DNS canonicalization); every failure is a SaslHandshakeError.
SaslMechanismFactory make_gssapi_mechanism(Thrift2SaslOptions options, std::string principal_host,
                                           std::string endpoint);

class SaslClientTransport final : public apache::thrift::transport::TVirtualTransport<SaslClientTransport> {
 public:
  // `link` names the connection in every handshake error (describe_sasl_link). `required` is the
  // least protection accepted. `max_frame_bytes` bounds a reply frame before it is read.
  SaslClientTransport(std::shared_ptr<apache::thrift::transport::TTransport> socket, SaslMechanismFactory mechanism,
                      std::string link, SaslQop required, std::size_t max_frame_bytes,
                      const std::shared_ptr<apache::thrift::TConfiguration>& config);
  ~SaslClientTransport() override;
  SaslClientTransport(const SaslClientTransport&) = delete;
  SaslClientTransport& operator=(const SaslClientTransport&) = delete;

  // Opens the socket if it is not open yet, then negotiates: SaslHandshakeError on any failure of
  // the handshake, TTransportException for the socket's own failures. The socket stays open after
  // a failure: its owner closes it (close()).
  void open() override;
  bool isOpen() const override;
  bool peek() override;
  void close() override;
  const std::string getOrigin() const override;

  uint32_t read(uint8_t* buf, uint32_t len);
  void write(const uint8_t* buf, uint32_t len);
  void flush() override;
  uint32_t readEnd() override;

  // After open(): the protection the gateway agreed to (at least `required`).
  SaslQop negotiated_qop() const { return negotiated_qop_; }

 private:
  void negotiate();
  void read_frame();

  std::shared_ptr<apache::thrift::transport::TTransport> socket_;
  SaslMechanismFactory make_mechanism_;
  std::string link_;
  SaslQop required_;
  std::size_t max_frame_bytes_;
  std::unique_ptr<SaslMechanism> mechanism_;
  bool open_ = false;
  SaslQop negotiated_qop_ = SaslQop::authentication;
  std::string write_buffer_;
  std::string frame_;  // the last frame read
  std::string plain_;  // its unwrapped bytes (the frame itself when nothing is wrapped)
  std::size_t read_pos_ = 0;
};

}  // namespace hbingest::connectors
