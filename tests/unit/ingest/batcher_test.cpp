#include "hbingest/ingest/batcher.h"

#include <gtest/gtest.h>

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;

connectors::RowMutation row_of(std::string key, std::size_t value_bytes) {
  connectors::RowMutation row;
  row.row = std::move(key);
  row.cells.push_back({"d", "v", std::string(value_bytes, 'x')});
  return row;
}

RowOrigin origin(std::int64_t offset) {
  RowOrigin o;
  o.message.topic = "t";
  o.message.offset = offset;
  return o;
}

TEST(Batcher, ClosesOnMaxRows) {
  Batcher batcher({3, 1 << 20, 1000ms});
  const auto now = Batcher::Clock::now();
  EXPECT_TRUE(batcher.add("t", row_of("a", 1), origin(0), now).empty());
  EXPECT_TRUE(batcher.add("t", row_of("b", 1), origin(1), now).empty());
  auto closed = batcher.add("t", row_of("c", 1), origin(2), now);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].rows.size(), 3u);
  EXPECT_EQ(closed[0].origins[2].message.offset, 2);
  EXPECT_EQ(batcher.open_rows(), 0u);
}

TEST(Batcher, ClosesBeforeARowWouldOverflowBytes) {
  Batcher batcher({100, 1000, 1000ms});
  const auto now = Batcher::Clock::now();
  EXPECT_TRUE(batcher.add("t", row_of("a", 600), origin(0), now).empty());
  auto closed = batcher.add("t", row_of("b", 600), origin(1), now);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].rows.size(), 1u) << "the first row alone; the second opens the next batch";
  EXPECT_EQ(batcher.open_rows(), 1u);
}

TEST(Batcher, OversizedRowGoesAlone) {
  Batcher batcher({100, 1000, 1000ms});
  auto closed = batcher.add("t", row_of("a", 5000), origin(0), Batcher::Clock::now());
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].rows.size(), 1u);
}

TEST(Batcher, DeletesCountTheBytesTheirCallCarries) {
  connectors::RowMutation whole_row;
  whole_row.row = std::string(100, 'k');
  whole_row.kind = connectors::MutationKind::delete_row;
  EXPECT_EQ(Batcher::row_bytes(whole_row), 108u);  // key + timestamp
  connectors::RowMutation nulls = row_of("key", 10);
  nulls.deleted_columns = {{"d", "gone"}, {"e", std::string(50, 'q')}};
  EXPECT_EQ(Batcher::row_bytes(nulls), (3 + 1 + 1 + 10 + 8) + (3 + 1 + 4 + 8) + (3 + 1 + 50 + 8));
  // A batch of deletes closes on max_bytes, not only on max_rows.
  Batcher batcher({100, 1000, 1000ms});
  const auto now = Batcher::Clock::now();
  std::vector<Batch> closed;
  for (int i = 0; i < 20 && closed.empty(); ++i) closed = batcher.add("t", whole_row, origin(i), now);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].rows.size(), 9u) << "9 x 108 bytes fit in 1000, a tenth does not";
  EXPECT_EQ(closed[0].bytes, 9u * 108u);
}

TEST(Batcher, LingerExpiresPerTable) {
  Batcher batcher({100, 1 << 20, 50ms});
  const auto t0 = Batcher::Clock::now();
  batcher.add("a", row_of("k1", 1), origin(0), t0);
  batcher.add("b", row_of("k2", 1), origin(1), t0 + 40ms);
  EXPECT_EQ(batcher.next_deadline(), t0 + 50ms);
  auto closed = batcher.expired(t0 + 60ms);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].table, "a");
  EXPECT_EQ(batcher.expired(t0 + 95ms).size(), 1u);
  EXPECT_FALSE(batcher.next_deadline());
}

TEST(Batcher, TablesBatchSeparately) {
  Batcher batcher({2, 1 << 20, 1000ms});
  const auto now = Batcher::Clock::now();
  batcher.add("a", row_of("k1", 1), origin(0), now);
  EXPECT_TRUE(batcher.add("b", row_of("k2", 1), origin(1), now).empty());
  EXPECT_EQ(batcher.flush_all().size(), 2u);
}

}  // namespace
}  // namespace hbingest::ingest
