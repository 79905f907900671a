#pragma once
// How many bytes the process has read from a TCP socket so far. Its own file: <linux/tcp.h>,
// which has the counter, conflicts with the <netinet/tcp.h> that httplib.h includes.

#include <cstdint>
#include <optional>

namespace hbingest::connectors::detail {

// The bytes the kernel received on `socket` minus those still waiting in its receive queue;
// nullopt when the socket cannot say (closed, not TCP).
std::optional<std::uint64_t> bytes_read_from(int socket);

}  // namespace hbingest::connectors::detail
