#include "socket_probe.h"

#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstddef>

namespace hbingest::connectors::detail {

std::optional<std::uint64_t> bytes_read_from(int socket) {
  tcp_info info{};
  socklen_t length = sizeof info;
  if (::getsockopt(socket, IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
      length < offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
    return std::nullopt;
  }
  int queued = 0;
  if (::ioctl(socket, SIOCINQ, &queued) != 0 || queued < 0) return std::nullopt;
  const auto received = static_cast<std::uint64_t>(info.tcpi_bytes_received);
  const auto waiting = static_cast<std::uint64_t>(queued);
  return received > waiting ? received - waiting : 0;
}

}  // namespace hbingest::connectors::detail
