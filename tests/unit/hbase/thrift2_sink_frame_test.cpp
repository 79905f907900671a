// The writer's sink over framed transport against a Thrift2 server that reads frames the way HBase's
// gateway does: up to hbase.regionserver.thrift.framed.max_frame_size_in_mb (2 MiB by default), and
// a larger frame drops the connection. One valid event with 85,000 fields encodes to a put above
// that; the sink sent it anyway, the gateway dropped it, and the writer retried it as a transport
// error forever while the partition stopped committing. A batch above the limit must be split, and
// a row that alone is above it rejected (the pipeline dead-letters rejected rows).

#include "hbingest/connectors/thrift2_sink.h"

#include <gtest/gtest.h>
#include <thrift/TConfiguration.h>
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

namespace hbingest::connectors {
namespace {

using namespace apache::thrift;

constexpr std::size_t kGatewayFrameBytes = 2 * 1024 * 1024;

class RecordingHandler final : public thrift2::gen::THBaseServiceNull {
 public:
  void putMultiple(const std::string&, const std::vector<thrift2::gen::TPut>& puts) override {
    std::lock_guard lock(mutex_);
    for (const auto& put : puts) rows_.push_back(put.row);
  }
  void deleteMultiple(std::vector<thrift2::gen::TDelete>&, const std::string&,
                      const std::vector<thrift2::gen::TDelete>& deletes) override {
    std::lock_guard lock(mutex_);
    for (const auto& del : deletes) rows_.push_back("delete " + del.row);
  }
  std::vector<std::string> rows() {
    std::lock_guard lock(mutex_);
    return rows_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> rows_;
};

// Thrift's framed transport with the gateway's frame limit: an oversized frame throws in the
// server, which then closes the connection, as HBase's does.
class GatewayFramedFactory final : public transport::TTransportFactory {
 public:
  std::shared_ptr<transport::TTransport> getTransport(std::shared_ptr<transport::TTransport> socket) override {
    // Read into a local first: make_shared takes its arguments by reference, and libthrift declares
    // the constant in its header without defining it, so a Debug build fails to link otherwise.
    const int max_message = TConfiguration::DEFAULT_MAX_MESSAGE_SIZE;
    auto config = std::make_shared<TConfiguration>(max_message, static_cast<int>(kGatewayFrameBytes));
    return std::make_shared<transport::TFramedTransport>(socket, config);
  }
};

class ListeningEvents final : public server::TServerEventHandler {
 public:
  void preServe() override { listening.set_value(); }
  std::promise<void> listening;
};

class FramedGateway {
 public:
  FramedGateway() : handler_(std::make_shared<RecordingHandler>()) {
    socket_ = std::make_shared<transport::TServerSocket>("127.0.0.1", 0);
    server_ = std::make_unique<server::TSimpleServer>(std::make_shared<thrift2::gen::THBaseServiceProcessor>(handler_),
                                                      socket_, std::make_shared<GatewayFramedFactory>(),
                                                      std::make_shared<protocol::TBinaryProtocolFactory>());
    auto events = std::make_shared<ListeningEvents>();
    auto listening = events->listening.get_future();
    server_->setServerEventHandler(events);
    thread_ = std::thread([this] { server_->serve(); });
    listening.wait();
  }
  ~FramedGateway() {
    server_->stop();
    thread_.join();
  }
  FramedGateway(const FramedGateway&) = delete;
  FramedGateway& operator=(const FramedGateway&) = delete;

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(socket_->getPort()); }
  std::vector<std::string> rows() const { return handler_->rows(); }

 private:
  std::shared_ptr<RecordingHandler> handler_;
  std::shared_ptr<transport::TServerSocket> socket_;
  std::unique_ptr<server::TSimpleServer> server_;
  std::thread thread_;
};

Thrift2Options framed_options(const FramedGateway& gateway) {
  Thrift2Options options;
  options.endpoints = {gateway.endpoint()};
  options.transport = ThriftTransportKind::framed;
  options.max_frame_bytes = kGatewayFrameBytes;
  options.read_timeout = std::chrono::milliseconds(5000);
  return options;
}

// The shape of the event: 85,000 small fields in about 0.9 MB of JSON, one cell each.
RowMutation wide_row(const std::string& key) {
  RowMutation row{key, {}, 1, std::nullopt};
  row.cells.reserve(85000);
  for (int i = 0; i < 85000; ++i) row.cells.push_back({"d", "f" + std::to_string(i), std::to_string(i % 1000)});
  return row;
}

RowMutation small_row(const std::string& key, std::size_t value_bytes = 10) {
  return {key, {{"d", "v", std::string(value_bytes, 'x')}}, 1, std::nullopt};
}

TEST(Thrift2SinkFrameLimit, RowAboveTheGatewaysFrameIsRejectedAndTheOthersAreStored) {
  FramedGateway gateway;
  auto sink = make_thrift2_sink(framed_options(gateway));
  const std::vector<RowMutation> rows = {small_row("a"), wide_row("wide"), small_row("c")};
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = sink->write("events", rows, {}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_NE(rejected[0].reason.find("hbase.framed_max_frame_bytes"), std::string::npos) << rejected[0].reason;
  EXPECT_EQ(gateway.rows(), (std::vector<std::string>{"a", "c"}));
}

TEST(Thrift2SinkFrameLimit, BatchAboveTheGatewaysFrameIsSplitAndStoredWhole) {
  FramedGateway gateway;
  auto sink = make_thrift2_sink(framed_options(gateway));
  std::vector<RowMutation> rows;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) {  // 40 x 100 KiB: twice the frame
    keys.push_back("row-" + std::to_string(i));
    rows.push_back(small_row(keys.back(), 100 * 1024));
  }
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = sink->write("events", rows, {}));
  EXPECT_TRUE(rejected.empty());
  EXPECT_EQ(gateway.rows(), keys);
}

// Deletes under the same limit: 85,000 null fields under delete_cell make a TDelete above the frame.
TEST(Thrift2SinkFrameLimit, ADeleteAboveTheGatewaysFrameIsRejectedAndTheOthersAreStored) {
  FramedGateway gateway;
  auto sink = make_thrift2_sink(framed_options(gateway));
  RowMutation nulls{"nulls", {}, 1, std::nullopt};
  for (int i = 0; i < 85000; ++i) nulls.deleted_columns.push_back({"d", "null_field_" + std::to_string(i)});
  RowMutation tombstone{"gone", {}, 1, std::nullopt};
  tombstone.kind = MutationKind::delete_row;
  const std::vector<RowMutation> rows = {tombstone, nulls, small_row("c")};
  std::vector<RejectedRow> rejected;
  ASSERT_NO_THROW(rejected = sink->write("events", rows, {}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_NE(rejected[0].reason.find("the delete is"), std::string::npos) << rejected[0].reason;
  EXPECT_EQ(gateway.rows(), (std::vector<std::string>{"delete gone", "c"}));
}

}  // namespace
}  // namespace hbingest::connectors
