#pragma once
// How to reach the HBase Thrift2 gateway(s). Mirrors the `hbase:` config section without
// depending on the config module.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace hbingest::connectors {

enum class ThriftTransportKind { framed, buffered };
enum class ThriftProtocolKind { binary, compact };

// TLS to the gateway (HBase's own Thrift servers only do TLS in HTTP mode, so in practice a TLS
// terminator such as stunnel in front of the binary gateway: docs/operations.md).
struct Thrift2TlsOptions {
  bool enabled = false;
  std::string ca_file;    // PEM: the CA(s) the gateway's certificate must chain to
  std::string cert_file;  // PEM client certificate for a terminator that requires one; empty: none
  std::string key_file;   // its private key (PEM), with cert_file
  // The certificate must name the host of the endpoint: a DNS name in its subjectAltName (or
  // CN) matching the configured host, or an IP address in it equal to the connected address.
  bool verify_hostname = true;
};

// Protection after the SASL handshake (HBase's hbase.thrift.security.qop): auth, auth-int, auth-conf.
enum class SaslQop { authentication, integrity, privacy };

// SASL GSSAPI (Kerberos) on every connection, as the gateway of a kerberized HBase requires: the
// handshake Java's TSaslClientTransport performs, then length-prefixed frames, wrapped (signed or
// encrypted) unless qop is authentication. Below the Thrift transport (framed or buffered) and
// above TLS, so both stay possible.
struct Thrift2SaslOptions {
  bool enabled = false;
  std::string service = "hbase";  // first component of the gateway's principal
  // Host component of the gateway's principal: "" = the host of each endpoint as written in
  // `endpoints`, never resolved (krb5.conf should say dns_canonicalize_hostname = false).
  std::string server_host;
  SaslQop qop = SaslQop::privacy;  // the least the gateway must negotiate; less is refused
  // hbingest's principal, for messages and to check that `ccache` holds its credentials; "" takes
  // whichever principal the cache holds.
  std::string principal;
  // The krb5 credential cache holding the client's TGT ("MEMORY:hbingest-hbase", "FILE:/path").
  // Credentials are taken from there (gss_acquire_cred_from), never from the process's default.
  // The daemon always sets a private cache it logs into from hbase.sasl.keytab (the Kerberos
  // login of connectors/kerberos); "" = krb5's default cache, for tests and tools only.
  std::string ccache;
};

struct Thrift2Options {
  std::vector<std::string> endpoints;  // "host:port"; a connection fails over to the next one
  ThriftTransportKind transport = ThriftTransportKind::buffered;
  ThriftProtocolKind protocol = ThriftProtocolKind::binary;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{10000};
  // With framed transport: the largest request frame the gateway reads
  // (hbase.regionserver.thrift.framed.max_frame_size_in_mb, 2 MiB by default). A larger one is
  // dropped with the connection, so the sink never sends one (thrift2_sink.h).
  std::size_t max_frame_bytes = 2 * 1024 * 1024;
  Thrift2TlsOptions tls;
  Thrift2SaslOptions sasl;
};

}  // namespace hbingest::connectors
