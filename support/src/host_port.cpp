#include "hbingest/support/host_port.h"

#include <arpa/inet.h>

#include <charconv>
#include <stdexcept>

namespace hbingest::support {

HostPort parse_host_port(std::string_view text, int min_port) {
  const auto fail = [&](const std::string& why) {
    return std::invalid_argument("'" + std::string(text) + "' is not host:port: " + why);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw fail("no port");
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find_first_of("[]:") != std::string_view::npos) {
    throw fail("an IPv6 address must be in brackets, like [::1]:9090");
  }
  if (host.empty()) throw fail("empty host");
  const std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port < min_port ||
      port > 65535) {
    throw fail("the port must be a number in " + std::to_string(min_port) + "..65535");
  }
  return HostPort{std::string(host), port};
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  return inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

}  // namespace hbingest::support
