#include "thrift2_connection.h"

#include "hbingest/connectors/hbase_error_policy.h"
#include "hbingest/support/host_port.h"

#include <optional>

#include <thrift/TApplicationException.h>
#include <thrift/TConfiguration.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

namespace hbingest::connectors {

namespace {

using apache::thrift::TConfiguration;
using apache::thrift::transport::TTransportException;

// Big batches (2 MiB by default) and scan chunks must fit one frame; Thrift's default is 16 MB.
constexpr int kMaxMessageBytes = 256 * 1024 * 1024;
constexpr int kMaxFrameBytes = 256 * 1024 * 1024;

support::HostPort parse_endpoint(const std::string& endpoint) {
  try {
    return support::parse_host_port(endpoint);
  } catch (const std::invalid_argument& e) {
    throw HBaseError(std::string("invalid Thrift2 endpoint ") + e.what(), endpoint, "connect", false);
  }
}

}  // namespace

Thrift2Connection::Thrift2Connection(Thrift2Options options, std::size_t first_endpoint)
    : options_(std::move(options)) {
  if (options_.endpoints.empty()) {
    throw HBaseError("no Thrift2 endpoints configured", "", "connect", false);
  }
  endpoint_index_ = first_endpoint % options_.endpoints.size();
}

Thrift2Connection::~Thrift2Connection() { disconnect(); }

void Thrift2Connection::disconnect() noexcept {
  client_.reset();
  if (transport_) {
    try {
      transport_->close();
    } catch (...) {
      // Closing a broken socket can throw; there is nothing left to release.
    }
    transport_.reset();
  }
}

void Thrift2Connection::connect() {
  using namespace apache::thrift;
  const support::HostPort hp = parse_endpoint(endpoint());
  auto config = std::make_shared<TConfiguration>(kMaxMessageBytes, kMaxFrameBytes);
  auto socket = std::make_shared<transport::TSocket>(hp.host, hp.port, config);
  socket->setConnTimeout(static_cast<int>(options_.connect_timeout.count()));
  socket->setRecvTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setSendTimeout(static_cast<int>(options_.read_timeout.count()));
  socket->setNoDelay(true);

  std::shared_ptr<transport::TTransport> transport;
  if (options_.transport == ThriftTransportKind::framed) {
    transport = std::make_shared<transport::TFramedTransport>(socket, config);
  } else {
    transport = std::make_shared<transport::TBufferedTransport>(socket, config);
  }
  std::shared_ptr<protocol::TProtocol> protocol;
  if (options_.protocol == ThriftProtocolKind::binary) {
    protocol = std::make_shared<protocol::TBinaryProtocol>(transport);
  } else {
    protocol = std::make_shared<protocol::TCompactProtocol>(transport);
  }
  transport->open();
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
