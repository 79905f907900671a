#include "hbingest/connectors/hbase_error_policy.h"

namespace hbingest::connectors {

namespace {

// Thrift's TApplicationExceptionType (thrift/TApplicationException.h), spelled out so this file
// stays free of Thrift headers.
constexpr int kApplicationUnknown = 0;
constexpr int kApplicationInternalError = 6;

}  // namespace

bool is_retriable(const GatewayFailure& failure) {
  switch (failure.kind) {
    case GatewayFailure::Kind::io_error:
      // The server's verdict, when it gives one, decides. Without it (gateways before canRetry
      // existed) nothing says the row is bad, so it is retried: a wrong "retriable" costs an alert
      // and a stuck partition an operator can see; a wrong "permanent" sends good rows to the DLQ
      // (or, before issue 12, nowhere). The message is never read: HBase's gateway sends
      // getMessage(), which rarely names the class, and words are no contract.
      // Checked against HBase 2.6.1: a put into a missing family or table answers canRetry=true
      // (HBase's client wraps it in RetriesExhaustedWithDetailsException), a missing namespace
      // canRetry=false (NamespaceNotFoundException is a DoNotRetryIOException).
      return failure.can_retry.value_or(true);
    case GatewayFailure::Kind::illegal_argument:
      // Thrown only for a scanner id the gateway does not know (expired lease, restarted gateway):
      // the same call with the same id cannot succeed; the caller has to open a new scanner.
      return false;
    case GatewayFailure::Kind::application_error:
      // The handler threw something other than an IOException. For puts that is HBase's client
      // refusing the data itself (IllegalArgumentException: "Row length 40000 is > 32767", "KeyValue
      // size too large"), which no retry changes; the sink then isolates the row by halving the
      // batch, so only that row is dead-lettered. Thrift reports such handler exceptions as
      // INTERNAL_ERROR (HBase 2.6.1, a 40000-byte row key: "Internal error processing
      // putMultiple"; older servers: UNKNOWN). Deletes go the same way (deleteMultiple with a
      // 40000-byte row key: INTERNAL_ERROR, tests/integration/hbase/hbase_deletes_test.cpp). Known limit: a handler
      // RuntimeException that is not about the data (HBase's connection cache failing inside the gateway) looks the
      // same. Every other type (unknown method, bad sequence id, missing result, protocol error) is the RPC going
      // wrong, not the row: reconnect and retry.
      return failure.application_error_type != kApplicationInternalError &&
             failure.application_error_type != kApplicationUnknown;
  }
  return true;
}

}  // namespace hbingest::connectors
