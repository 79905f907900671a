// WriterPool over sinks that fail on demand.
#include "hbingest/ingest/writer_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

// Fails every write after a delay (a gateway that answers slowly with an error, or a black hole
// that only the read timeout ends) until `healthy` is set.
class SlowFailingSink final : public connectors::RowSink {
 public:
  explicit SlowFailingSink(std::atomic<bool>& healthy) : healthy_(healthy) {}
  std::vector<connectors::RejectedRow> write(const std::string&, std::span<const connectors::RowMutation>,
                                             const connectors::WriteOptions&) override {
    if (healthy_) return {};
    std::this_thread::sleep_for(50ms);
    throw connectors::HBaseError("read timeout", "slow:1", "putMultiple", true);
  }
  std::string endpoint() const override { return "slow:1"; }

 private:
  std::atomic<bool>& healthy_;
};

TEST(WriterPool, WritesCountAsFailingFromTheFirstErrorUntilTheNextSuccessNotOnlyWhileBackingOff) {
  // Readiness reads writes_failing(). A writer spends most of a slow failure inside the call, not
  // in its (short) backoff: sampled only during backoff, /readyz said "ready" through a black hole.
  std::atomic<bool> healthy{false};
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<SlowFailingSink>(healthy));
  PipelineObserver observer;
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer);
  EXPECT_FALSE(pool.writes_failing());
  Batch batch;
  batch.table = "t";
  batch.rows.push_back(connectors::RowMutation{"k", {}, 1, std::nullopt});
  batch.origins.push_back(RowOrigin{});
  pool.submit(std::move(batch));

  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!pool.writes_failing() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  int not_failing = 0;
  for (int i = 0; i < 100; ++i) {
    if (!pool.writes_failing()) ++not_failing;
    std::this_thread::sleep_for(3ms);
  }
  EXPECT_EQ(not_failing, 0) << "samples that said writes were fine while every attempt failed";

  healthy = true;
  pool.wait_for_completion(5s);
  EXPECT_EQ(pool.take_completed().size(), 1u);
  EXPECT_FALSE(pool.writes_failing()) << "the first success clears it";
  pool.stop();
}

}  // namespace
}  // namespace hbingest::ingest
