#include "hbingest/query/query_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "event_table.h"
#include "fake_scanner_factory.h"
#include "hbingest/connectors/hbase_types.h"

namespace hbingest::query {
namespace {

using namespace std::chrono_literals;
using testing::EventTable;
using testing::FakeScannerFactory;

std::vector<std::string> keys_of(const QueryResult& result) {
  std::vector<std::string> keys;
  for (const auto& row : result.rows) keys.push_back(row.key);
  return keys;
}

Query login_query(const EventTable& table) {
  Query q;
  q.table = table.table();
  q.spec = table.spec();
  q.event_id = "login";
  q.limit = 0;
  return q;
}

class CountingObserver final : public QueryObserver {
 public:
  void on_query(QueryOutcome outcome, std::chrono::microseconds, std::size_t rows_seen) noexcept override {
    last_outcome = outcome;
    rows = rows_seen;
    ++queries;
  }
  void on_scanner_open() noexcept override { ++opens; }
  void on_scanner_close() noexcept override { ++closes; }
  std::atomic<int> queries{0}, opens{0}, closes{0};
  std::atomic<std::size_t> rows{0};
  std::atomic<QueryOutcome> last_outcome{QueryOutcome::error};
};

class QueryEngineTest : public ::testing::Test {
 protected:
  static constexpr int kBuckets = 10;
  void SetUp() override { table_.fill(factory_, 400, 7); }

  EventTable table_{"events", kBuckets};
  FakeScannerFactory factory_;
};

TEST_F(QueryEngineTest, PlansOneScanPerBucket) {
  QueryEngine engine(factory_, {});
  const auto result = engine.run(login_query(table_));
  EXPECT_EQ(result.stats.scans, static_cast<std::size_t>(kBuckets));
  EXPECT_EQ(keys_of(result), table_.expected("login", std::nullopt, std::nullopt, Order::asc, 0));
  EXPECT_FALSE(result.stats.truncated);
}

// The core property: for random ranges, limits, orders and engine settings, the merged result
// equals a brute-force filter + sort, and no scanner stays open.
TEST_F(QueryEngineTest, MergeEqualsBruteForceForRandomQueries) {
  std::mt19937 rng(42);
  const auto& events = table_.events();
  for (int iteration = 0; iteration < 120; ++iteration) {
    EngineOptions options;
    options.concurrency = std::array{1, 2, 3, 16}[rng() % 4];
    options.chunk_rows = std::array{1, 2, 7, 500}[rng() % 4];
    options.prefetch_chunks = 1 + static_cast<int>(rng() % 3);
    QueryEngine engine(factory_, options);

    Query q = login_query(table_);
    q.event_id = rng() % 4 == 0 ? "order" : "login";
    q.order = rng() % 2 ? Order::asc : Order::desc;
    q.limit = std::array<std::size_t, 5>{0, 1, 5, 37, 100000}[rng() % 5];
    switch (rng() % 5) {
      case 0:  // whole time span
        break;
      case 1: {  // exactly one event's instant
        const auto& e = events[rng() % events.size()];
        q.from_ms = e.ts_ms;
        q.to_ms = e.ts_ms + 1;
        break;
      }
      case 2:  // a range with no events at all
        q.from_ms = EventTable::kStartMs + EventTable::kSpanMs + 1000;
        q.to_ms = *q.from_ms + 60000;
        break;
      default: {  // random, usually crossing many buckets' rows
        std::uniform_int_distribution<std::int64_t> t(EventTable::kStartMs - 1000,
                                                      EventTable::kStartMs + EventTable::kSpanMs + 1000);
        auto a = t(rng), b = t(rng);
        if (a == b) ++b;
        q.from_ms = std::min(a, b);
        q.to_ms = std::max(a, b);
      }
    }
    const bool serial = rng() % 4 == 0;
    const auto expected = table_.expected(*q.event_id, q.from_ms, q.to_ms, q.order, q.limit);
    const auto result = engine.run(q, {.deadline = std::nullopt, .serial = serial});
    ASSERT_EQ(keys_of(result), expected) << "iteration " << iteration << " concurrency " << options.concurrency
                                         << " chunk " << options.chunk_rows << " serial " << serial;
    const auto all = table_.expected(*q.event_id, q.from_ms, q.to_ms, q.order, 0);
    EXPECT_EQ(result.stats.truncated, q.limit != 0 && all.size() > q.limit) << "iteration " << iteration;
    EXPECT_EQ(engine.open_scanners(), 0);
    EXPECT_EQ(factory_.open_now(), 0);
  }
}

// Calls (round trips, on a real server) per bucket, keyed by the bucket's start row.
class CallCounter {
 public:
  explicit CallCounter(FakeScannerFactory& factory) {
    factory.on_next = [this](const connectors::ScanRequest& request, int) {
      const std::lock_guard lock(mutex_);
      ++calls_[request.start_row];
    };
  }
  std::map<std::string, int> take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(calls_, {});
  }

 private:
  std::mutex mutex_;
  std::map<std::string, int> calls_;
};

// A bucket whose rows fit in one chunk costs one call: the short chunk says the range is over,
// so no call is spent to learn it (the fake throws if one is), with or without a limit, parallel
// or serial, either order.
TEST_F(QueryEngineTest, ABucketThatFitsInOneChunkCostsOneCall) {
  CallCounter counter(factory_);
  QueryEngine engine(factory_, {.concurrency = 4, .chunk_rows = 500, .prefetch_chunks = 2});
  for (const bool serial : {false, true}) {
    for (const Order order : {Order::asc, Order::desc}) {
      for (const std::size_t limit : {std::size_t{0}, std::size_t{1000}}) {
        SCOPED_TRACE(::testing::Message()
                     << "serial " << serial << " desc " << (order == Order::desc) << " limit " << limit);
        Query q = login_query(table_);
        q.order = order;
        q.limit = limit;
        const auto result = engine.run(q, {.deadline = std::nullopt, .serial = serial});
        EXPECT_EQ(keys_of(result), table_.expected("login", std::nullopt, std::nullopt, order, limit));
        const auto calls = counter.take();
        EXPECT_EQ(calls.size(), static_cast<std::size_t>(kBuckets));
        for (const auto& [start, n] : calls) EXPECT_EQ(n, 1) << "bucket starting at " << start;
      }
    }
  }
}

// A time-ordered limit reads about twice the limit, however large the buckets (each bucket's first
// call asks for 2·limit/n rows, and its next chunk is fetched only once the merge is three quarters
// into the current one), and never more than the same query without a limit. The old reader (a
// share + 50 % chunk, with two more prefetched for every bucket) read up to 4.6 times the limit here.
TEST_F(QueryEngineTest, ALimitedQueryReadsAboutTwiceTheLimitInAboutOneCallPerBucket) {
  FakeScannerFactory factory;
  EventTable table("big", kBuckets);
  table.fill(factory, 20000, 11);  // about 1,000 login rows per bucket
  QueryEngine engine(factory, {.concurrency = 4, .chunk_rows = 500, .prefetch_chunks = 2});
  for (const bool serial : {false, true}) {
    for (const Order order : {Order::asc, Order::desc}) {
      SCOPED_TRACE(::testing::Message() << "serial " << serial << " desc " << (order == Order::desc));
      Query q = login_query(table);
      q.order = order;
      q.limit = 200;
      const int rows_before = factory.rows_served();
      const int calls_before = factory.calls_total();
      const auto result = engine.run(q, {.deadline = std::nullopt, .serial = serial});
      ASSERT_EQ(keys_of(result), table.expected("login", std::nullopt, std::nullopt, order, q.limit));
      const int rows_read = factory.rows_served() - rows_before;
      const int calls = factory.calls_total() - calls_before;
      EXPECT_GE(rows_read, 200);
      EXPECT_LE(rows_read, 3 * 200);
      EXPECT_LE(calls, 2 * kBuckets);

      q.limit = 0;
      const int unlimited_before = factory.rows_served();
      const auto all = engine.run(q, {.deadline = std::nullopt, .serial = serial});
      EXPECT_GT(factory.rows_served() - unlimited_before, rows_read);
      EXPECT_EQ(all.rows.size(), table.expected("login", std::nullopt, std::nullopt, order, 0).size());
    }
  }
}

TEST_F(QueryEngineTest, RowsCarryDecodedKeyPartsAndSelectedColumns) {
  QueryEngine engine(factory_, {});
  Query q = login_query(table_);
  q.limit = 1;
  q.columns = {"d:user"};
  const auto result = engine.run(q);
  ASSERT_EQ(result.rows.size(), 1u);
  const auto& row = result.rows.front();
  const auto& first = table_.events();
  const auto it = std::find_if(first.begin(), first.end(), [&](const auto& e) { return e.key == row.key; });
  ASSERT_NE(it, first.end());
  ASSERT_EQ(row.cells.size(), 1u);
  EXPECT_EQ(row.cells[0].qualifier, "user");
  ASSERT_TRUE(row.event_component.has_value());
  bool saw_event = false, saw_time = false, saw_offset = false;
  for (const auto& part : row.parts) {
    if (part.name == *row.event_component) saw_event = part.text == "login";
    if (part.type == "time") saw_time = part.number == it->ts_ms;
    if (part.type == "offset") saw_offset = part.number == it->offset;
  }
  EXPECT_TRUE(saw_event);
  EXPECT_TRUE(saw_time);
  EXPECT_TRUE(saw_offset);
  EXPECT_GE(row.bucket, 0);
}

TEST_F(QueryEngineTest, LimitStopsEarlyAndClosesEveryScanner) {
  CountingObserver observer;
  QueryEngine engine(factory_, {.concurrency = 4, .chunk_rows = 1, .prefetch_chunks = 1}, &observer);
  for (const Order order : {Order::asc, Order::desc}) {
    Query q = login_query(table_);
    q.order = order;
    q.limit = 3;
    const auto result = engine.run(q);
    EXPECT_EQ(keys_of(result), table_.expected("login", std::nullopt, std::nullopt, order, 3));
    EXPECT_TRUE(result.stats.truncated);
    EXPECT_EQ(engine.open_scanners(), 0);
    EXPECT_EQ(factory_.open_now(), 0);
  }
  EXPECT_EQ(observer.opens.load(), observer.closes.load());
  EXPECT_EQ(observer.queries.load(), 2);
  EXPECT_EQ(observer.last_outcome.load(), QueryOutcome::ok);
  EXPECT_EQ(observer.rows.load(), 3u);
}

// Key-order merges open ranges in order, at most `concurrency` ahead: a limit reached in the first
// range must leave the later ranges unopened.
TEST_F(QueryEngineTest, KeyOrderLimitNeverOpensLaterRanges) {
  for (const Order order : {Order::asc, Order::desc}) {
    FakeScannerFactory factory;
    EventTable table("events", kBuckets);
    table.fill(factory, 400, 11);
    QueryEngine engine(factory, {.concurrency = 2, .chunk_rows = 1, .prefetch_chunks = 1});
    Query q;
    q.table = table.table();
    q.spec = table.spec();
    q.full_table_splits = kBuckets;
    q.merge = MergeBy::key;
    q.order = order;
    q.limit = 2;
    const auto result = engine.run(q);
    ASSERT_EQ(result.rows.size(), 2u);
    EXPECT_TRUE(result.stats.truncated);
    EXPECT_LE(factory.opened_total(), 2);
    EXPECT_EQ(result.stats.scans_opened, static_cast<std::size_t>(factory.opened_total()));
    EXPECT_EQ(factory.open_now(), 0);
    // The rows are the first two (or last two) keys of the table.
    std::vector<std::string> all;
    for (const auto& e : table.events()) all.push_back(e.key);
    std::sort(all.begin(), all.end());
    if (order == Order::desc) std::reverse(all.begin(), all.end());
    EXPECT_EQ(keys_of(result), std::vector<std::string>(all.begin(), all.begin() + 2));
  }
}

TEST_F(QueryEngineTest, KeyOrderFullTableReturnsEveryRowInKeyOrder) {
  QueryEngine engine(factory_, {.concurrency = 3, .chunk_rows = 5, .prefetch_chunks = 2});
  Query q;
  q.table = table_.table();
  q.spec = table_.spec();
  q.full_table_splits = kBuckets;
  q.merge = MergeBy::key;
  q.limit = 0;
  std::vector<std::string> all;
  for (const auto& e : table_.events()) all.push_back(e.key);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(keys_of(engine.run(q)), all);
  EXPECT_EQ(factory_.opened_total(), kBuckets);
}

TEST_F(QueryEngineTest, DeadlineThrowsQueryTimeoutAndLeavesNoScannerOpen) {
  factory_.on_next = [](const connectors::ScanRequest&, int) { std::this_thread::sleep_for(50ms); };
  CountingObserver observer;
  QueryEngine engine(factory_, {.concurrency = 4, .chunk_rows = 1, .prefetch_chunks = 1, .deadline = 20ms}, &observer);
  for (const bool serial : {false, true}) {
    EXPECT_THROW(engine.run(login_query(table_), {.deadline = std::nullopt, .serial = serial}), QueryTimeout);
    EXPECT_EQ(engine.open_scanners(), 0);
    EXPECT_EQ(factory_.open_now(), 0);
    EXPECT_EQ(observer.last_outcome.load(), QueryOutcome::timeout);
  }
  // Ranges a worker had not picked when the deadline hit were never opened.
  EXPECT_LT(factory_.opened_total(), 2 * kBuckets);
}

TEST_F(QueryEngineTest, PerCallDeadlineOverridesTheDefault) {
  factory_.on_next = [](const connectors::ScanRequest&, int) { std::this_thread::sleep_for(5ms); };
  QueryEngine engine(factory_, {.concurrency = 16, .chunk_rows = 500, .prefetch_chunks = 1, .deadline = 1ms});
  const auto result = engine.run(login_query(table_), {.deadline = 60s, .serial = false});
  EXPECT_EQ(keys_of(result), table_.expected("login", std::nullopt, std::nullopt, Order::asc, 0));
}

TEST_F(QueryEngineTest, FirstOpenErrorCancelsTheRest) {
  std::atomic<bool> failed{false};
  factory_.on_open = [&](const connectors::ScanRequest&) {
    if (!failed.exchange(true)) {
      throw connectors::HBaseError("connection refused", "127.0.0.1:1", "openScanner", true);
    }
  };
  factory_.on_next = [](const connectors::ScanRequest&, int) { std::this_thread::sleep_for(20ms); };
  CountingObserver observer;
  QueryEngine engine(factory_, {.concurrency = 2, .chunk_rows = 1, .prefetch_chunks = 1}, &observer);
  try {
    engine.run(login_query(table_));
    FAIL() << "expected HBaseError";
  } catch (const connectors::HBaseError& e) {
    EXPECT_TRUE(e.retriable());
    EXPECT_EQ(e.operation(), "openScanner");
  }
  EXPECT_LT(factory_.opened_total(), kBuckets - 1);
  EXPECT_EQ(factory_.open_now(), 0);
  EXPECT_EQ(engine.open_scanners(), 0);
  EXPECT_EQ(observer.last_outcome.load(), QueryOutcome::hbase_error);
  EXPECT_EQ(observer.opens.load(), observer.closes.load());
}

TEST_F(QueryEngineTest, ErrorMidScanIsRethrownAfterClosingAll) {
  std::atomic<int> calls{0};
  factory_.on_next = [&](const connectors::ScanRequest&, int call) {
    if (call == 2 && calls.fetch_add(1) == 0) {
      throw connectors::HBaseError("region too busy", "hb:9090", "getScannerRows", false);
    }
  };
  QueryEngine engine(factory_, {.concurrency = 3, .chunk_rows = 1, .prefetch_chunks = 2});
  for (const bool serial : {false, true}) {
    calls = 0;
    try {
      engine.run(login_query(table_), {.deadline = std::nullopt, .serial = serial});
      FAIL() << "expected HBaseError";
    } catch (const connectors::HBaseError& e) {
      EXPECT_FALSE(e.retriable());
      EXPECT_STREQ(e.what(), "region too busy");
    }
    EXPECT_EQ(factory_.open_now(), 0);
    EXPECT_EQ(engine.open_scanners(), 0);
  }
}

TEST_F(QueryEngineTest, ExceptionFromRowCallbackCancelsTheQuery) {
  QueryEngine engine(factory_, {.concurrency = 4, .chunk_rows = 2, .prefetch_chunks = 1});
  int seen = 0;
  EXPECT_THROW(engine.stream(login_query(table_), {},
                             [&](ResultRow&&) {
                               if (++seen == 3) throw std::runtime_error("client went away");
                             }),
               std::runtime_error);
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(factory_.open_now(), 0);
}

TEST_F(QueryEngineTest, RejectsMalformedQueriesBeforeOpeningAnything) {
  QueryEngine engine(factory_, {});
  Query backwards = login_query(table_);
  backwards.from_ms = EventTable::kStartMs + 10;
  backwards.to_ms = EventTable::kStartMs + 10;
  EXPECT_THROW(engine.run(backwards), QueryError);
  Query mixed;
  mixed.table = table_.table();
  mixed.spec = table_.spec();
  mixed.full_table_splits = 4;  // full table can only merge by key
  EXPECT_THROW(engine.run(mixed), QueryError);
  Query no_spec;
  EXPECT_THROW(engine.run(no_spec), QueryError);
  EXPECT_EQ(factory_.opened_total(), 0);
}

TEST_F(QueryEngineTest, EngineRejectsInvalidOptions) {
  EXPECT_THROW(QueryEngine(factory_, {.concurrency = 0}), std::invalid_argument);
  EXPECT_THROW(QueryEngine(factory_, {.concurrency = 1, .chunk_rows = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace hbingest::query
