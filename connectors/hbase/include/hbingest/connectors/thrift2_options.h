#pragma once
// How to reach the HBase Thrift2 gateway(s). Mirrors the `hbase:` config section without
// depending on the config module.

#include <chrono>
#include <string>
#include <vector>

namespace hbingest::connectors {

enum class ThriftTransportKind { framed, buffered };
enum class ThriftProtocolKind { binary, compact };

struct Thrift2Options {
  std::vector<std::string> endpoints;  // "host:port"; a connection fails over to the next one
  ThriftTransportKind transport = ThriftTransportKind::buffered;
  ThriftProtocolKind protocol = ThriftProtocolKind::binary;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{10000};
};

}  // namespace hbingest::connectors
