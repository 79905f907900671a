#pragma once
// One SASL client mechanism, as SaslClientTransport drives it: the handshake's tokens, then the
// negotiated security layer. The transport speaks the wire format; the mechanism does the
// cryptography (cyrus-sasl's GSSAPI in production, a fake in the tests of the transport).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace hbingest::connectors {

class SaslMechanism {
 public:
  virtual ~SaslMechanism() = default;

  virtual std::string_view name() const = 0;  // sent in SASL START ("GSSAPI")
  // The initial response, then the answer to each challenge. A failure throws SaslHandshakeError
  // with the mechanism's detail.
  virtual std::string start() = 0;
  virtual std::string step(const std::string& challenge) = 0;
  virtual bool complete() const = 0;

  // After complete(): the security strength factor (0: no layer, 1: integrity, above: privacy),
  // the most plain bytes one encode() takes, and the largest token decode() accepts.
  virtual unsigned ssf() const = 0;
  virtual std::size_t max_output() const = 0;
  virtual std::size_t max_token_bytes() const = 0;
  // Wraps at most max_output() bytes into one packet: the token's 4-byte big-endian length, then
  // the token (cyrus-sasl's layout). Valid until the next call.
  virtual std::string_view encode(const char* data, std::size_t size) = 0;
  // Unwraps one packet fed in pieces (length first); returns the plain bytes once it is whole,
  // empty before. Valid until the next call.
  virtual std::string_view decode(const char* data, std::size_t size) = 0;
};

// Makes the mechanism for one connection, when its socket is open (credentials are looked up then).
using SaslMechanismFactory = std::function<std::unique_ptr<SaslMechanism>()>;

}  // namespace hbingest::connectors
