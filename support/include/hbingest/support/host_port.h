#pragma once
// "host:port" endpoints, written once for every place that takes one (Thrift2 gateways, the HTTP
// listen address, config validation). IPv6 literals come bracketed, "[::1]:9090"; the parsed host
// is without brackets, ready for getaddrinfo.

#include <string>
#include <string_view>

namespace hbingest::support {

struct HostPort {
  std::string host;  // "127.0.0.1", "gateway.example", "::1" (brackets removed)
  int port = 0;
};

// Throws std::invalid_argument saying what is wrong with `text` (and quoting it) unless it is a
// non-empty host, a colon and a decimal port in [min_port, 65535]. A host with a colon must be a
// bracketed IPv6 literal.
HostPort parse_host_port(std::string_view text, int min_port = 1);

// True when a server bound to `host` (as parse_host_port returns it) is reachable only from this
// machine: "localhost", 127.0.0.0/8 or ::1. Anything else (0.0.0.0, ::, a name, an interface's
// address) counts as reachable from the network.
bool is_loopback_host(std::string_view host);

}  // namespace hbingest::support
