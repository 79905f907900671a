#include "hbingest/connectors/thrift2_sink.h"

#include "hbingest/connectors/thrift2_put_encoder.h"
#include "thrift2_connection.h"

namespace hbingest::connectors {

namespace {

class Thrift2Sink final : public RowSink {
 public:
  Thrift2Sink(const Thrift2Options& options, std::size_t first_endpoint)
      : connection_(options, first_endpoint),
        encoder_(options.protocol),
        max_call_bytes_(options.transport == ThriftTransportKind::framed ? options.max_frame_bytes : 0) {}

  std::vector<RejectedRow> write(const std::string& table, std::span<const RowMutation> rows,
                                 const WriteOptions& options) override {
    std::vector<RejectedRow> rejected;
    write_range(table, rows, 0, options, rejected);
    return rejected;
  }

  std::string endpoint() const override { return connection_.endpoint(); }

 private:
  // Writes rows[...] whose first element is batch index `base`. On a permanent failure of a
  // multi-row call, halves the range until the failing rows are isolated: HBase's putMultiple
  // does not say which rows failed, and one bad row must not send good ones to the DLQ.
  void write_range(const std::string& table, std::span<const RowMutation> rows, std::size_t base,
                   const WriteOptions& options, std::vector<RejectedRow>& rejected) {
    if (rows.empty()) return;
    const auto call = encoder_.encode(table, rows, options.durability);
    if (max_call_bytes_ != 0 && call.size() > max_call_bytes_) {
      // The gateway would drop the connection on this frame, and on every retry alike. The batch
      // limits keep most calls below it (check-config); wide rows can still exceed it.
      if (rows.size() == 1) {
        rejected.push_back({base, "the put is " + std::to_string(call.size()) +
                                      " bytes, over the gateway's frame limit of " + std::to_string(max_call_bytes_) +
                                      " bytes (hbase.framed_max_frame_bytes)"});
      } else {
        split(table, rows, base, options, rejected);
      }
      return;
    }
    try {
      connection_.call("putMultiple", [&](auto& client) {
        // THBaseServiceClient::putMultiple with our bytes in place of send_putMultiple's
        // (thrift2_put_encoder.h says why); the generated client reads the answer.
        const auto transport = client.getOutputProtocol()->getTransport();
        transport->write(call.data(), static_cast<std::uint32_t>(call.size()));
        transport->writeEnd();
        transport->flush();
        client.recv_putMultiple();
      });
    } catch (const HBaseError& e) {
      if (e.retriable()) throw;
      if (rows.size() == 1) {
        rejected.push_back({base, e.what()});
        return;
      }
      split(table, rows, base, options, rejected);
    }
  }

  void split(const std::string& table, std::span<const RowMutation> rows, std::size_t base, const WriteOptions& options,
             std::vector<RejectedRow>& rejected) {
    const std::size_t half = rows.size() / 2;
    write_range(table, rows.first(half), base, options, rejected);
    write_range(table, rows.subspan(half), base + half, options, rejected);
  }

  Thrift2Connection connection_;
  Thrift2PutEncoder encoder_;
  // The largest call the gateway accepts; 0: no limit (buffered transport).
  std::size_t max_call_bytes_;
};

}  // namespace

std::unique_ptr<RowSink> make_thrift2_sink(const Thrift2Options& options, std::size_t first_endpoint) {
  return std::make_unique<Thrift2Sink>(options, first_endpoint);
}

}  // namespace hbingest::connectors
