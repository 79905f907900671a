// WriterPool on its own: whatever a RowSink throws, the writer thread survives and the batch is
// retried until stored.

#include "hbingest/ingest/writer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

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

// A TableGate the test opens and closes, recording the failures reported to it.
class FakeGate final : public TableGate {
 public:
  bool writable(const std::string&) const override { return open; }
  void write_failed(const std::string& table) override {
    std::lock_guard lock(mutex_);
    failed_.push_back(table);
  }
  std::vector<std::string> failed() const {
    std::lock_guard lock(mutex_);
    return failed_;
  }
  std::atomic<bool> open{true};

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> failed_;
};

TEST(WriterPool, HoldsABatchWhileTheGateSaysItsTableIsUnavailableAndWritesItOnceItIsBack) {
  // A put into a disabled table occupies a gateway handler for HBase's whole client retry budget
  // (~150 s on 2.6.1); a writer that knows the table is unavailable must not send it.
  testing::FakeTable table;
  FakeGate gate;
  gate.open = false;
  CountingObserver observer;
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<testing::FakeSink>(table));
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer, &gate);
  pool.submit(one_row_batch());
  std::this_thread::sleep_for(100ms);
  {
    std::lock_guard lock(table.mutex);
    EXPECT_EQ(table.writes, 0u) << "a put was sent into a table known to be unavailable";
  }
  EXPECT_TRUE(pool.writes_failing()) << "a held batch counts as failing (readiness)";
  EXPECT_TRUE(pool.take_completed().empty()) << "a held batch is not complete: its offsets stay uncommitted";

  gate.open = true;
  pool.wait_for_completion(5s);
  EXPECT_EQ(pool.take_completed().size(), 1u);
  EXPECT_FALSE(pool.writes_failing());
  pool.stop();
  std::lock_guard lock(table.mutex);
  EXPECT_TRUE(table.rows.contains("r1"));
}

bool eventually_completed(WriterPool& pool, std::vector<BatchOutcome>& done) {
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (done.empty() && std::chrono::steady_clock::now() < give_up) {
    pool.wait_for_completion(50ms);
    done = pool.take_completed();
  }
  return !done.empty();
}

class WrittenObserver final : public PipelineObserver {
 public:
  void on_batch_written(const std::string&, std::size_t rows, std::size_t bytes, std::chrono::nanoseconds,
                        std::int64_t oldest_event_ms) override {
    std::lock_guard lock(mutex);
    written_rows += rows;
    written_bytes += bytes;
    oldest = oldest_event_ms;
  }
  void on_rows_rejected(std::size_t rows) override { rejected += rows; }
  std::mutex mutex;
  std::size_t written_rows = 0;
  std::size_t written_bytes = 0;
  std::int64_t oldest = 0;
  std::atomic<std::size_t> rejected{0};
};

TEST(WriterPool, DeletesAreWrittenCountedAndRejectedLikePuts) {
  testing::FakeTable table;
  table.poison_rows = {"refused"};
  WrittenObserver observer;
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<testing::FakeSink>(table));
  WriterPool pool(std::move(sinks), {}, {1ms, 1ms}, observer);
  {
    std::lock_guard lock(table.mutex);
    table.rows["gone"] = connectors::RowMutation{"gone", {{"d", "q", "old"}}, 100, std::nullopt};
  }
  Batch batch;
  batch.table = "default:events";
  connectors::RowMutation put{"kept", {{"d", "q", "v"}, {"d", "n", "x"}}, 300, std::nullopt};
  put.deleted_columns = {{"d", "n"}};
  connectors::RowMutation tombstone{"gone", {}, 200, std::nullopt};
  tombstone.kind = connectors::MutationKind::delete_row;
  connectors::RowMutation refused = tombstone;
  refused.row = "refused";
  batch.rows = {put, tombstone, refused};
  batch.origins.resize(3);
  batch.bytes = 77;
  pool.submit(std::move(batch));
  std::vector<BatchOutcome> outcomes;
  ASSERT_TRUE(eventually_completed(pool, outcomes));
  ASSERT_EQ(outcomes.size(), 1u);
  ASSERT_EQ(outcomes[0].rejected.size(), 1u);
  EXPECT_EQ(outcomes[0].rejected[0].index, 2u);
  EXPECT_EQ(outcomes[0].batch.rows.size(), 3u) << "the batch comes back whole, deletes included (dead letters)";
  {
    std::lock_guard lock(observer.mutex);
    EXPECT_EQ(observer.written_rows, 2u);
    EXPECT_EQ(observer.written_bytes, 77u);
    EXPECT_EQ(observer.oldest, 200) << "a tombstone's event time counts for the write lag";
  }
  EXPECT_EQ(observer.rejected.load(), 1u);
  std::lock_guard lock(table.mutex);
  EXPECT_FALSE(table.rows.contains("gone"));
  ASSERT_TRUE(table.rows.contains("kept"));
  EXPECT_EQ(table.rows["kept"].cells.size(), 1u);
}

TEST(WriterPool, TellsTheGateWhichTableAWriteFailedFor) {
  testing::FakeTable table;
  table.transient_failures = 1;
  FakeGate gate;
  CountingObserver observer;
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<testing::FakeSink>(table));
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer, &gate);
  pool.submit(one_row_batch());
  pool.wait_for_completion(5s);
  EXPECT_EQ(pool.take_completed().size(), 1u);
  pool.stop();
  EXPECT_EQ(gate.failed(), (std::vector<std::string>{"default:events"}));
}

// Counts the writes inside it at once (the largest count seen too); each write waits until the test
// lets writes through (`open`), then stores the rows like FakeSink.
class HeldSink final : public connectors::RowSink {
 public:
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = true;
    int inside = 0;
    int most_inside = 0;
    int written = 0;
  };
  HeldSink(testing::FakeTable& table, Shared& shared) : inner_(table), shared_(shared) {}
  std::vector<connectors::RejectedRow> write(const std::string& table, std::span<const connectors::RowMutation> rows,
                                             const connectors::WriteOptions& options) override {
    {
      std::unique_lock lock(shared_.mutex);
      shared_.most_inside = std::max(shared_.most_inside, ++shared_.inside);
      shared_.changed.notify_all();
      shared_.changed.wait(lock, [&] { return shared_.open; });
    }
    // Long enough that, unheld, the other writers would be inside meanwhile.
    std::this_thread::sleep_for(2ms);
    auto rejected = inner_.write(table, rows, options);
    const std::lock_guard lock(shared_.mutex);
    --shared_.inside;
    ++shared_.written;
    shared_.changed.notify_all();
    return rejected;
  }
  std::string endpoint() const override { return "fake:1"; }

 private:
  testing::FakeSink inner_;
  Shared& shared_;
};

// A depth the controller keeps for the length of a test (a window no test reaches, so no
// decision): all the writers' batches by default, for the tests of the share's limit under it.
DepthControllerOptions steady_depth(std::size_t initial = std::numeric_limits<std::size_t>::max()) {
  DepthControllerOptions depth;
  depth.initial_depth = initial;
  depth.window = std::chrono::hours(1);
  return depth;
}

Batch numbered_batch(int i) {
  Batch batch = one_row_batch();
  batch.rows[0].row = "r" + std::to_string(i);
  return batch;
}

std::vector<std::unique_ptr<connectors::RowSink>> concurrency_sinks(int n, testing::FakeTable& table,
                                                                    HeldSink::Shared& shared) {
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < n; ++i) sinks.push_back(std::make_unique<HeldSink>(table, shared));
  return sinks;
}

TEST(WriterPool, WhileAQueryRunsTheWritersKeepOnlyTheirShareInFlightAndStillStoreEverything) {
  testing::FakeTable table;
  HeldSink::Shared shared;
  CountingObserver observer;
  support::GatewayShare share(1);
  WriterPool pool(concurrency_sinks(4, table, shared), {}, RetryPolicy{1ms, 2ms}, observer, nullptr, steady_depth(),
                  &share);
  constexpr int kBatches = 40;
  {
    const auto query = share.register_query();  // runs for the whole test: ingest must not starve
    for (int i = 0; i < kBatches; ++i) pool.submit(numbered_batch(i));
    std::unique_lock lock(shared.mutex);
    ASSERT_TRUE(shared.changed.wait_for(lock, 20s, [&] { return shared.written == kBatches; }))
        << "only " << shared.written << " of " << kBatches << " batches stored while a query ran";
    EXPECT_EQ(shared.most_inside, 1) << "more batches in flight than the share allows";
  }
  pool.stop();
  const std::lock_guard lock(table.mutex);
  for (int i = 0; i < kBatches; ++i) EXPECT_TRUE(table.rows.contains("r" + std::to_string(i))) << i;
}

TEST(WriterPool, WritersHeldBackForAQueryGoOnWhenItEnds) {
  testing::FakeTable table;
  HeldSink::Shared shared;
  shared.open = false;  // every write stays inside until the test opens
  CountingObserver observer;
  support::GatewayShare share(1);
  WriterPool pool(concurrency_sinks(4, table, shared), {}, RetryPolicy{1ms, 2ms}, observer, nullptr, steady_depth(),
                  &share);
  auto query = share.register_query();
  for (int i = 0; i < 4; ++i) pool.submit(numbered_batch(i));
  std::unique_lock lock(shared.mutex);
  ASSERT_TRUE(shared.changed.wait_for(lock, 10s, [&] { return shared.inside >= 1; }));
  lock.unlock();
  query = support::GatewayShare::Registration{};  // the query ends while one write is still inside
  lock.lock();
  // Only the share's listener can wake them: no batch has completed.
  EXPECT_TRUE(shared.changed.wait_for(lock, 10s, [&] { return shared.inside == 4; }))
      << shared.inside << " of 4 writers took a batch after the query ended";
  shared.open = true;
  shared.changed.notify_all();
  EXPECT_TRUE(shared.changed.wait_for(lock, 10s, [&] { return shared.written == 4; }));
  lock.unlock();
  pool.stop();
}

TEST(WriterPool, WithoutAShareEveryWriterHasABatchInFlight) {
  testing::FakeTable table;
  HeldSink::Shared shared;
  shared.open = false;
  CountingObserver observer;
  WriterPool pool(concurrency_sinks(4, table, shared), {}, RetryPolicy{1ms, 2ms}, observer, nullptr, steady_depth());
  for (int i = 0; i < 4; ++i) pool.submit(numbered_batch(i));
  std::unique_lock lock(shared.mutex);
  EXPECT_TRUE(shared.changed.wait_for(lock, 10s, [&] { return shared.inside == 4; }));
  shared.open = true;
  shared.changed.notify_all();
  EXPECT_TRUE(shared.changed.wait_for(lock, 10s, [&] { return shared.written == 4; }));
  lock.unlock();
  pool.stop();
}

// Counts the calls inside write() at once; each takes `delay`. Fails (retriable) for table "down".
class ConcurrencySink final : public connectors::RowSink {
 public:
  ConcurrencySink(std::atomic<int>& now, std::atomic<int>& most, std::chrono::milliseconds delay)
      : now_(now), most_(most), delay_(delay) {}
  std::vector<connectors::RejectedRow> write(const std::string& table, std::span<const connectors::RowMutation>,
                                             const connectors::WriteOptions&) override {
    if (table == "down") throw connectors::HBaseError("fake outage", "c:1", "putMultiple", true);
    const int inside = ++now_;
    int seen = most_.load();
    while (inside > seen && !most_.compare_exchange_weak(seen, inside)) {
    }
    std::this_thread::sleep_for(delay_);
    --now_;
    return {};
  }
  std::string endpoint() const override { return "c:1"; }

 private:
  std::atomic<int>& now_;
  std::atomic<int>& most_;
  std::chrono::milliseconds delay_;
};

class DepthObserver final : public PipelineObserver {
 public:
  void on_writer_depth(std::size_t batches) override { depth = batches; }
  std::atomic<std::size_t> depth{0};
};

Batch batch_for(const std::string& table) {
  Batch batch = one_row_batch();
  batch.table = table;
  return batch;
}

std::size_t wait_for_completions(WriterPool& pool, std::size_t expected) {
  std::size_t done = 0;
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (done < expected && std::chrono::steady_clock::now() < give_up) {
    pool.wait_for_completion(50ms);
    done += pool.take_completed().size();
  }
  return done;
}

TEST(WriterPool, SendsNoMoreBatchesAtOnceThanTheDepthAllows) {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < 6; ++i) sinks.push_back(std::make_unique<ConcurrencySink>(now, most, 5ms));
  DepthObserver observer;
  const auto depth = steady_depth(2);  // no decision: the depth stays where it started
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer, nullptr, depth);
  EXPECT_EQ(observer.depth.load(), 2u) << "the starting depth is reported";
  for (int i = 0; i < 40; ++i) pool.submit(batch_for("t"));
  EXPECT_EQ(wait_for_completions(pool, 40), 40u);
  pool.stop();
  EXPECT_LE(most.load(), 2) << "six writers, a depth of two";
  EXPECT_EQ(pool.estimate().depth, 2u);
}

TEST(WriterPool, ABatchBackingOffLeavesTheDepthToBatchesThatCanBeWritten) {
  // A depth of one and a batch for a table that fails: while it backs off (and is retried, on its
  // own writer), the batches behind it are written.
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < 2; ++i) sinks.push_back(std::make_unique<ConcurrencySink>(now, most, 1ms));
  CountingObserver observer;
  const auto depth = steady_depth(1);
  WriterPool pool(std::move(sinks), {}, RetryPolicy{5ms, 20ms}, observer, nullptr, depth);
  pool.submit(batch_for("down"));
  for (int i = 0; i < 10; ++i) pool.submit(batch_for("up"));
  EXPECT_EQ(wait_for_completions(pool, 10), 10u) << "the writable batches behind the failing one";
  EXPECT_GT(observer.retries.load(), 0);
  EXPECT_TRUE(pool.writes_failing());
  pool.stop();
}

// Fails the first write of table "flaky" (retriable), then counts like ConcurrencySink.
class FlakyOnceSink final : public connectors::RowSink {
 public:
  FlakyOnceSink(std::atomic<bool>& failed, std::atomic<int>& now, std::atomic<int>& most)
      : failed_(failed), inner_(now, most, 20ms) {}
  std::vector<connectors::RejectedRow> write(const std::string& table, std::span<const connectors::RowMutation> rows,
                                             const connectors::WriteOptions& options) override {
    if (table == "flaky" && !failed_.exchange(true)) {
      throw connectors::HBaseError("fake overload", "c:1", "putMultiple", true);
    }
    return inner_.write(table, rows, options);
  }
  std::string endpoint() const override { return "c:1"; }

 private:
  std::atomic<bool>& failed_;
  ConcurrencySink inner_;
};

TEST(WriterPool, ABatchComingBackFromItsBackoffWaitsForRoomInTheDepth) {
  // A batch that backed off comes back into the depth only when there is room: sent beside the
  // batches that took its place, it made more batches at the gateways than the depth (and than
  // the gateway share while a query runs, when retries come back exactly as the gateways are
  // overloaded).
  std::atomic<bool> failed{false};
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < 2; ++i) sinks.push_back(std::make_unique<FlakyOnceSink>(failed, now, most));
  CountingObserver observer;
  const auto depth = steady_depth(1);
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer, nullptr, depth);
  pool.submit(batch_for("flaky"));
  for (int i = 0; i < 10; ++i) pool.submit(batch_for("up"));
  EXPECT_EQ(wait_for_completions(pool, 11), 11u);
  pool.stop();
  EXPECT_EQ(observer.retries.load(), 1);
  EXPECT_LE(most.load(), 1) << "a depth of one, yet the retried batch went out beside another";
}

// Holds the batches of one table (as the table watch holds a missing one).
class OneTableHeldGate final : public TableGate {
 public:
  bool writable(const std::string& table) const override { return table != "held"; }
  void write_failed(const std::string&) override {}
};

TEST(WriterPool, ABatchHeldForItsTableDoesNotTakeTheDepthEither) {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  for (int i = 0; i < 2; ++i) sinks.push_back(std::make_unique<ConcurrencySink>(now, most, 1ms));
  CountingObserver observer;
  OneTableHeldGate gate;
  const auto depth = steady_depth(1);
  WriterPool pool(std::move(sinks), {}, RetryPolicy{1ms, 2ms}, observer, &gate, depth);
  pool.submit(batch_for("held"));
  for (int i = 0; i < 10; ++i) pool.submit(batch_for("up"));
  EXPECT_EQ(wait_for_completions(pool, 10), 10u);
  EXPECT_TRUE(pool.writes_failing()) << "the held batch still counts as failing";
  pool.stop();
}

}  // namespace
}  // namespace hbingest::ingest
