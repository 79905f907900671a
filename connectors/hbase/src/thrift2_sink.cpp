#include "hbingest/connectors/thrift2_sink.h"

#include <algorithm>

#include "hbingest/connectors/mutation_runs.h"
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
    // Runs in the batch's order, each stored before the next is sent: a row's put, delete, put
    // reach HBase in that order. A retriable failure throws out of the whole batch; the writer
    // sends it again from the start, which is safe: a put or a delete at the same timestamp
    // stored twice is the same cells and markers.
    for (const auto& run : mutation_runs(rows)) {
      write_range(table, run.kind, rows.subspan(run.begin, run.end - run.begin), run.begin, options, rejected);
    }
    // A put with deleted columns is in two runs: refused in both, it is reported once.
    std::stable_sort(rejected.begin(), rejected.end(),
                     [](const RejectedRow& a, const RejectedRow& b) { return a.index < b.index; });
    rejected.erase(std::unique(rejected.begin(), rejected.end(),
                               [](const RejectedRow& a, const RejectedRow& b) { return a.index == b.index; }),
                   rejected.end());
    return rejected;
  }

  std::string endpoint() const override { return connection_.endpoint(); }

 private:
  // Writes rows[...] (one call's kind) whose first element is batch index `base`. On a permanent
  // failure of a multi-row call, halves the range until the failing rows are isolated: neither
  // putMultiple nor deleteMultiple says which rows failed, and one bad row must not send good
  // ones to the DLQ.
  void write_range(const std::string& table, RunKind kind, std::span<const RowMutation> rows, std::size_t base,
                   const WriteOptions& options, std::vector<RejectedRow>& rejected) {
    if (rows.empty()) return;
    const bool puts = kind == RunKind::puts;
    const auto call = puts ? encoder_.encode(table, rows, options.durability)
                           : encoder_.encode_deletes(table, rows, options.durability);
    if (max_call_bytes_ != 0 && call.size() > max_call_bytes_) {
      // The gateway would drop the connection on this frame, and on every retry alike. The batch
      // limits keep most calls below it (check-config); wide rows can still exceed it.
      if (rows.size() == 1) {
        rejected.push_back({base, std::string(puts ? "the put is " : "the delete is ") + std::to_string(call.size()) +
                                      " bytes, over the gateway's frame limit of " + std::to_string(max_call_bytes_) +
                                      " bytes (hbase.framed_max_frame_bytes)"});
      } else {
        split(table, kind, rows, base, options, rejected);
      }
      return;
    }
    try {
      if (puts) {
        connection_.call("putMultiple", [&](auto& client) {
          // THBaseServiceClient::putMultiple with our bytes in place of send_putMultiple's
          // (thrift2_put_encoder.h says why); the generated client reads the answer.
          send(client, call);
          client.recv_putMultiple();
        });
      } else {
        std::vector<thrift2::gen::TDelete> not_applied;
        connection_.call("deleteMultiple", [&](auto& client) {
          send(client, call);
          client.recv_deleteMultiple(not_applied);
        });
        // The deletes the gateway says it did not apply. HBase 2's gateway never names any (a
        // failure throws, as for puts); an older one named those its HTable left over after an
        // error. Nothing says why, so they count as a retriable failure of the run: sending a
        // delete again is harmless (the same markers), dropping it would keep a row meant to go.
        if (!not_applied.empty()) {
          throw HBaseError("HBase deleteMultiple via " + connection_.endpoint() + " did not apply " +
                               std::to_string(not_applied.size()) + " of " + std::to_string(rows.size()) +
                               " deletes (the first for row of " + std::to_string(not_applied.front().row.size()) +
                               " bytes)",
                           connection_.endpoint(), "deleteMultiple", true);
        }
      }
    } catch (const HBaseError& e) {
      if (e.retriable()) throw;
      if (rows.size() == 1) {
        rejected.push_back({base, e.what()});
        return;
      }
      split(table, kind, rows, base, options, rejected);
    }
  }

  static void send(thrift2::gen::THBaseServiceClient& client, std::span<const std::uint8_t> call) {
    const auto transport = client.getOutputProtocol()->getTransport();
    transport->write(call.data(), static_cast<std::uint32_t>(call.size()));
    transport->writeEnd();
    transport->flush();
  }

  void split(const std::string& table, RunKind kind, std::span<const RowMutation> rows, std::size_t base,
             const WriteOptions& options, std::vector<RejectedRow>& rejected) {
    const std::size_t half = rows.size() / 2;
    write_range(table, kind, rows.first(half), base, options, rejected);
    write_range(table, kind, rows.subspan(half), base + half, options, rejected);
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
