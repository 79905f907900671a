// WriterPool on its own: whatever a RowSink throws, the writer thread survives and the batch is
// retried until stored.

#include "hbingest/ingest/writer_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <new>
#include <stdexcept>
#include <thread>

#include "fakes.h"

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

// Throws `fault` on its first write, then writes like FakeSink.
class ThrowOnceSink final : public connectors::RowSink {
 public:
  ThrowOnceSink(testing::FakeTable& table, std::function<void()> fault) : inner_(table), fault_(std::move(fault)) {}
  std::vector<connectors::RejectedRow> write(const std::string& table, std::span<const connectors::RowMutation> rows,
                                             const connectors::WriteOptions& options) override {
    if (!thrown_.exchange(true)) fault_();
    return inner_.write(table, rows, options);
  }
  std::string endpoint() const override { return "fake:1"; }

 private:
  testing::FakeSink inner_;
  std::function<void()> fault_;
  std::atomic<bool> thrown_{false};
};

class CountingObserver final : public PipelineObserver {
 public:
  void on_write_retry(const std::string&, const std::string&) override { ++retries; }
  void on_write_unexpected_error(const std::string&) override { ++unexpected; }
  std::atomic<int> retries{0};
  std::atomic<int> unexpected{0};
};

Batch one_row_batch() {
  Batch batch;
  batch.table = "default:events";
  connectors::RowMutation row;
  row.row = "r1";
  row.cells.push_back({"d", "q", "v"});
  batch.rows.push_back(row);
  batch.origins.push_back(RowOrigin{});
  batch.bytes = 10;
  return batch;
}

void expect_stored_after_one_retry(std::function<void()> fault) {
  testing::FakeTable table;
  CountingObserver observer;
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<ThrowOnceSink>(table, std::move(fault)));
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 5ms}, observer);
  pool.submit(one_row_batch());
  std::vector<BatchOutcome> done;
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (done.empty() && std::chrono::steady_clock::now() < give_up) {
    pool.wait_for_completion(50ms);
    done = pool.take_completed();
  }
  pool.stop();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].rejected.empty());
  std::lock_guard lock(table.mutex);
  EXPECT_TRUE(table.rows.contains("r1"));
  EXPECT_EQ(observer.retries.load(), 1);
  EXPECT_EQ(observer.unexpected.load(), 1);
}

TEST(WriterPool, SurvivesARuntimeErrorFromTheSinkAndRetries) {
  expect_stored_after_one_retry([] { throw std::runtime_error("boom"); });
}

TEST(WriterPool, SurvivesBadAllocFromTheSinkAndRetries) {
  expect_stored_after_one_retry([] { throw std::bad_alloc(); });
}

TEST(WriterPool, SurvivesANonStandardExceptionAndRetries) {
  expect_stored_after_one_retry([] { throw 42; });
}

}  // namespace
}  // namespace hbingest::ingest
