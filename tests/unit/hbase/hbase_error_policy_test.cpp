// The retry decision for failed Thrift2 calls, over what HBase 2.x gateways really send: TIOError
// carries getMessage() (usually without a class name) and canRetry = !(cause instanceof
// DoNotRetryIOException); older gateways leave canRetry out.

#include "hbingest/connectors/hbase_error_policy.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace hbingest::connectors {
namespace {

using Kind = GatewayFailure::Kind;

struct Case {
  const char* what;
  Kind kind;
  std::optional<bool> can_retry;
  int application_error_type;
  std::string message;
  bool retriable;
};

constexpr std::optional<bool> kUnset = std::nullopt;
// Thrift's TApplicationExceptionType values.
constexpr int kUnknown = 0;
constexpr int kUnknownMethod = 1;
constexpr int kBadSequenceId = 4;
constexpr int kMissingResult = 5;
constexpr int kInternalError = 6;
constexpr int kProtocolError = 7;

const std::vector<Case>& cases() {
  static const std::vector<Case> table = {
      // TIOError from an older gateway (no canRetry): unknown means retriable, whatever the text.
      {"RegionTooBusy inside RetriesExhausted", Kind::io_error, kUnset, 0,
       "Failed 3 actions: Over memstore limit=512.0 M, regionName=3f1e0c, server=rs1,16020,1700000000000: 3 times, "
       "servers with issues: rs1,16020,1700000000000",
       true},
      {"ServerTooBusy", Kind::io_error, kUnset, 0,
       "Busy Server=rs1,16020,1700000000000, concurrent tasks 101 exceeds the limit 100", true},
      {"RpcThrottling", Kind::io_error, kUnset, 0, "number of write requests exceeded - wait 1.50sec", true},
      {"CallDropped", Kind::io_error, kUnset, 0, "Call dropped, server rs1,16020,1700000000000 is overloaded", true},
      {"CallQueueTooBig", Kind::io_error, kUnset, 0,
       "Call queue is full on rs1,16020,1700000000000, is hbase.ipc.server.max.callqueue.size too small?", true},
      {"TableNotFound (message is the table name)", Kind::io_error, kUnset, 0, "default:events", true},
      {"NoSuchColumnFamily", Kind::io_error, kUnset, 0,
       "Column family x does not exist in region events,,1700000000000.3f1e0c. in table 'default:events'", true},
      {"NotServingRegion", Kind::io_error, kUnset, 0,
       "events,,1700000000000.3f1e0c. is not online on rs1,16020,1700000000000", true},
      {"TIOError without a message", Kind::io_error, kUnset, 0, "", true},
      // HBase 2.x: canRetry is the server's verdict and decides, whatever the text says.
      {"RetriesExhausted around TableNotFound, canRetry", Kind::io_error, true, 0,
       "Failed 1 action: Table 'default:events' was not found: 1 time, servers with issues: null", true},
      {"RetriesExhausted around NoSuchColumnFamily, canRetry", Kind::io_error, true, 0,
       "Failed 2 actions: Column family x does not exist: 2 times, servers with issues: rs1,16020,1700000000000", true},
      {"read-only gateway (DoNotRetryIOException)", Kind::io_error, false, 0, "Thrift Server is in Read-only mode.",
       false},
      {"FailedSanityCheck (DoNotRetryIOException)", Kind::io_error, false, 0,
       "Requested row out of range for doMiniBatchMutation on HRegion events,,1700000000000.3f1e0c.", false},
      {"text naming a transient class cannot overrule canRetry=false", Kind::io_error, false, 0,
       "org.apache.hadoop.hbase.RegionTooBusyException: Over memstore limit", false},
      {"text naming no class, canRetry=true", Kind::io_error, true, 0, "Connection reset by peer", true},
      // Seen from HBase 2.6.1's gateway (local stack, putMultiple / getNamespaceDescriptor):
      {"HBase 2.6.1: put into a missing family", Kind::io_error, true, 0,
       "Failed 1 action: org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family nosuch does "
       "not exist in region errprobe,,1795464368405.24a63be49bed13900fdb77ebb95c22a7. in table 'errprobe'",
       true},
      {"HBase 2.6.1: put into a missing table", Kind::io_error, true, 0,
       "Failed 1 action: no_such_table_errprobe: 1 time, servers with issues: null", true},
      {"HBase 2.6.1: missing namespace", Kind::io_error, false, 0,
       "org.apache.hadoop.hbase.NamespaceNotFoundException: nosuchns_errprobe", false},
      {"HBase 2.6.1: row key over 32767 bytes", Kind::application_error, kUnset, kInternalError,
       "Internal error processing putMultiple", false},
      // TIllegalArgument: only for a scanner id the gateway does not know; the same call cannot succeed.
      {"unknown scanner id", Kind::illegal_argument, kUnset, 0, "Invalid scanner Id", false},
      // TApplicationException: the handler threw a RuntimeException (HBase's client rejecting the
      // data: row too long, cell too big) or the RPC itself went wrong.
      {"handler threw (internal error)", Kind::application_error, kUnset, kInternalError,
       "Internal error processing putMultiple", false},
      {"handler threw (older Thrift: unknown type)", Kind::application_error, kUnset, kUnknown,
       "Row length 40000 is > 32767", false},
      {"method unknown to the gateway (thrift1 gateway?)", Kind::application_error, kUnset, kUnknownMethod,
       "Invalid method name: 'putMultiple'", true},
      {"reply out of step", Kind::application_error, kUnset, kBadSequenceId,
       "putMultiple failed: out of sequence response", true},
      {"reply without result", Kind::application_error, kUnset, kMissingResult, "putMultiple failed: unknown result",
       true},
      {"protocol error", Kind::application_error, kUnset, kProtocolError, "Bad version in readMessageBegin", true},
  };
  return table;
}

TEST(HBaseErrorPolicy, ClassifiesWhatGatewaysSend) {
  ASSERT_GE(cases().size(), 13u);
  for (const auto& c : cases()) {
    GatewayFailure failure;
    failure.kind = c.kind;
    failure.can_retry = c.can_retry;
    failure.application_error_type = c.application_error_type;
    failure.message = c.message;
    EXPECT_EQ(is_retriable(failure), c.retriable) << c.what << ": \"" << c.message << "\"";
  }
}

}  // namespace
}  // namespace hbingest::connectors
