#pragma once
// Retry or not: how a failed Thrift2 call is classified. Pure (no Thrift types, no I/O) so the
// decision table can be tested without a server; thrift2_connection.cpp maps Thrift's exceptions
// onto GatewayFailure and asks here.

#include <optional>
#include <string_view>

namespace hbingest::connectors {

struct GatewayFailure {
  enum class Kind {
    io_error,           // TIOError: HBase (through the gateway) threw an IOException
    illegal_argument,   // TIllegalArgument: only getScannerRows/closeScanner, for an unknown scanner id
    application_error,  // TApplicationException: the gateway's handler threw something else, or RPC-level trouble
  };
  Kind kind = Kind::io_error;
  // TIOError.canRetry (field 2) when the gateway sent it; HBase 2.x sets it to
  // !(cause instanceof DoNotRetryIOException). nullopt: an older gateway that does not send it.
  std::optional<bool> can_retry;
  // TApplicationException's type (Thrift's TApplicationExceptionType: 0 unknown, 6 internal error, …).
  int application_error_type = 0;
  std::string_view message;
};

// True when a later attempt of the same call may succeed.
bool is_retriable(const GatewayFailure& failure);

}  // namespace hbingest::connectors
