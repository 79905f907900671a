// The Thrift2 sink with deletes, against a scripted Thrift2 server on 127.0.0.1 that records every
// call: a batch goes out as runs in its order, deletes carry the event's timestamp, and HBase's
// refusals and the deletes a gateway says it did not apply take the same paths as for puts.

#include <gtest/gtest.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/server/TSimpleServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TServerSocket.h>

#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "THBaseService.h"
#include "hbingest/connectors/thrift2_sink.h"

namespace hbingest::connectors {
namespace {

using namespace apache::thrift;
namespace gen = thrift2::gen;

// One call as the server read it: "put a", "delete a@5", "delete a@5 d:gone@5".
struct Call {
  std::string method;
  std::vector<std::string> mutations;
  friend bool operator==(const Call&, const Call&) = default;
};

std::ostream& operator<<(std::ostream& out, const Call& call) {
  out << call.method << "[";
  for (const auto& mutation : call.mutations) out << mutation << ";";
  return out << "]";
}

gen::TIOError io_error(bool can_retry) {
  gen::TIOError error;
  error.__set_message("scripted refusal");
  error.__set_canRetry(can_retry);
  return error;
}

// Rows named "bad" are refused for good in either call, "busy" retriably; a delete of row
// "unapplied" is answered as not applied (what pre-2.0 gateways did with leftovers).
class ScriptedHandler final : public gen::THBaseServiceNull {
 public:
  void putMultiple(const std::string&, const std::vector<gen::TPut>& puts) override {
    std::vector<std::string> rows;
    for (const auto& put : puts) rows.push_back(put.row);
    check_and_record("putMultiple", rows);
  }

  void deleteMultiple(std::vector<gen::TDelete>& not_applied, const std::string&,
                      const std::vector<gen::TDelete>& deletes) override {
    std::vector<std::string> described;
    for (const auto& del : deletes) {
      std::string text = del.row;
      if (del.__isset.timestamp) text += "@" + std::to_string(del.timestamp);
      if (del.__isset.columns) {
        for (const auto& column : del.columns) {
          text += " " + column.family + ":" + column.qualifier + "@" +
                  (column.__isset.timestamp ? std::to_string(column.timestamp) : "none");
        }
      }
      text += del.deleteType == gen::TDeleteType::DELETE_COLUMNS ? "" : " (not DELETE_COLUMNS)";
      described.push_back(text);
      if (del.row == "unapplied") not_applied.push_back(del);
    }
    std::vector<std::string> rows;
    for (const auto& del : deletes) rows.push_back(del.row);
    check_and_record("deleteMultiple", rows, described);
  }

  std::vector<Call> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  void check_and_record(const std::string& method, const std::vector<std::string>& rows,
                        std::vector<std::string> described = {}) {
    for (const auto& row : rows) {
      if (row == "bad") throw io_error(false);
      if (row == "busy") throw io_error(true);
    }
    if (described.empty()) described = rows;
    std::lock_guard lock(mutex_);
    calls_.push_back({method, std::move(described)});
  }

  std::mutex mutex_;
  std::vector<Call> calls_;
};

class ListeningEvents final : public server::TServerEventHandler {
 public:
  void preServe() override { listening.set_value(); }
  std::promise<void> listening;
};

class ScriptedGateway {
 public:
  ScriptedGateway() : handler_(std::make_shared<ScriptedHandler>()) {
    socket_ = std::make_shared<transport::TServerSocket>("127.0.0.1", 0);
    server_ = std::make_unique<server::TSimpleServer>(std::make_shared<gen::THBaseServiceProcessor>(handler_), socket_,
                                                      std::make_shared<transport::TBufferedTransportFactory>(),
                                                      std::make_shared<protocol::TBinaryProtocolFactory>());
    auto events = std::make_shared<ListeningEvents>();
    auto listening = events->listening.get_future();
    server_->setServerEventHandler(events);
    thread_ = std::thread([this] { server_->serve(); });
    listening.wait();
  }
  ~ScriptedGateway() {
    server_->stop();
    thread_.join();
  }
  ScriptedGateway(const ScriptedGateway&) = delete;
  ScriptedGateway& operator=(const ScriptedGateway&) = delete;

  std::unique_ptr<RowSink> sink() const {
    Thrift2Options options;
    options.endpoints = {"127.0.0.1:" + std::to_string(socket_->getPort())};
    options.read_timeout = std::chrono::milliseconds(5000);
    return make_thrift2_sink(options);
  }
  std::vector<Call> calls() const { return handler_->calls(); }

 private:
  std::shared_ptr<ScriptedHandler> handler_;
  std::shared_ptr<transport::TServerSocket> socket_;
  std::unique_ptr<server::TSimpleServer> server_;
  std::thread thread_;
};

RowMutation put(std::string row, std::int64_t ts = 5) { return {std::move(row), {{"d", "q", "v"}}, ts, std::nullopt}; }

RowMutation del(std::string row, std::int64_t ts = 5) {
  RowMutation mutation{std::move(row), {}, ts, std::nullopt};
  mutation.kind = MutationKind::delete_row;
  return mutation;
}

RowMutation put_deleting(std::string row, std::int64_t ts = 5) {
  RowMutation mutation = put(std::move(row), ts);
  mutation.deleted_columns = {{"d", "gone"}, {"e", "also"}};
  return mutation;
}

TEST(Thrift2SinkDeletes, AMixedBatchGoesOutAsRunsInItsOrderWithTheEventsTimestamps) {
  ScriptedGateway gateway;
  const std::vector<RowMutation> rows = {put("a", 1), put("b", 1), del("a", 2),
                                         del("b", 3), put("a", 3), put_deleting("c", 4)};
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = gateway.sink()->write("t", rows, {}));
  EXPECT_TRUE(rejected.empty());
  EXPECT_EQ(gateway.calls(), (std::vector<Call>{{"putMultiple", {"a", "b"}},
                                                {"deleteMultiple", {"a@2", "b@3"}},
                                                {"putMultiple", {"a", "c"}},
                                                {"deleteMultiple", {"c@4 d:gone@4 e:also@4"}}}));
}

TEST(Thrift2SinkDeletes, ADeleteHBaseRefusesForGoodIsIsolatedAndTheOthersAreStored) {
  ScriptedGateway gateway;
  const std::vector<RowMutation> rows = {del("x"), del("y"), del("bad"), del("z"), put("after")};
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = gateway.sink()->write("t", rows, {}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 2u);
  EXPECT_NE(rejected[0].reason.find("deleteMultiple"), std::string::npos) << rejected[0].reason;
  std::vector<std::string> stored;
  for (const auto& call : gateway.calls()) {
    for (const auto& mutation : call.mutations) stored.push_back(call.method + " " + mutation);
  }
  EXPECT_EQ(stored, (std::vector<std::string>{"deleteMultiple x@5", "deleteMultiple y@5", "deleteMultiple z@5",
                                              "putMultiple after"}));
}

TEST(Thrift2SinkDeletes, ARowRefusedInBothItsPutAndItsColumnDeletesIsReportedOnce) {
  ScriptedGateway gateway;
  const std::vector<RowMutation> rows = {put("a"), put_deleting("bad"), del("b")};
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = gateway.sink()->write("t", rows, {}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
}

TEST(Thrift2SinkDeletes, ARetriableRefusalOfADeleteFailsTheBatchForTheWriterToRetry) {
  ScriptedGateway gateway;
  const std::vector<RowMutation> rows = {put("a"), del("busy")};
  try {
    (void)gateway.sink()->write("t", rows, {});
    FAIL() << "expected HBaseError";
  } catch (const HBaseError& e) {
    EXPECT_TRUE(e.retriable());
    EXPECT_EQ(e.operation(), "deleteMultiple");
  }
}

TEST(Thrift2SinkDeletes, DeletesTheGatewayDidNotApplyAreARetriableFailureNotDropped) {
  ScriptedGateway gateway;
  const std::vector<RowMutation> rows = {del("x"), del("unapplied")};
  try {
    (void)gateway.sink()->write("t", rows, {});
    FAIL() << "expected HBaseError";
  } catch (const HBaseError& e) {
    EXPECT_TRUE(e.retriable());
    EXPECT_EQ(e.operation(), "deleteMultiple");
    EXPECT_NE(std::string(e.what()).find("did not apply 1 of 2 deletes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hbingest::connectors
