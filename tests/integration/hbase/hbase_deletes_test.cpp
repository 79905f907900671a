// Deletes and tables of several families against a real HBase Thrift2 server (HBINGEST_THRIFT2):
// what a row holds after puts and deletes, whatever order and writer they came in. The rule under
// test (hbase_types.h, RowMutation): a delete at t removes every cell with a timestamp <= t and
// none above, and in the same millisecond the delete wins over a put whichever came first.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/connectors/thrift2_sink.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

Thrift2Options options_from_env() {
  const char* endpoint = std::getenv("HBINGEST_THRIFT2");
  if (endpoint == nullptr) throw std::runtime_error("HBINGEST_THRIFT2 is not set: run through scripts/test.sh");
  Thrift2Options options;
  options.endpoints = {endpoint};
  options.read_timeout = 30s;
  return options;
}

std::string unique_table(const std::string& prefix) {
  std::random_device random;
  return prefix + "_" + std::to_string(random() % 1000000000);
}

// Event times a little in the past (well within the families' TTL), so that tests choose them.
std::int64_t base_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
             .count() -
         60'000;
}

RowMutation put(std::string row, std::int64_t ts, std::vector<Cell> cells) {
  return {std::move(row), std::move(cells), ts, std::nullopt};
}

RowMutation delete_row(std::string row, std::int64_t ts) {
  RowMutation mutation{std::move(row), {}, ts, std::nullopt};
  mutation.kind = MutationKind::delete_row;
  return mutation;
}

FamilySpec family(std::string name) {
  FamilySpec spec;
  spec.name = std::move(name);
  spec.ttl = 600s;
  return spec;
}

class HBaseDeletesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = unique_table("it_del");
    TableSpec spec;
    spec.table = table_;
    spec.families = {family("d"), family("e")};
    ASSERT_EQ(admin_.ensure_table(spec).outcome, EnsureOutcome::created);
  }
  void TearDown() override { admin_.delete_table("default", table_); }

  void write(std::vector<RowMutation> rows) {
    auto sink = make_thrift2_sink(options_);
    ASSERT_TRUE(sink->write(table_, rows, {}).empty());
  }

  // "family:qualifier" -> value of the row's current cells; empty when the row is gone.
  std::map<std::string, std::string> cells(const std::string& row) {
    auto factory = make_thrift2_scanner_factory(options_, 1);
    auto scanner = factory->open({table_, row, row + std::string(1, '\0'), {}, 10, false});
    std::map<std::string, std::string> out;
    for (auto chunk = scanner->next_chunk(); !chunk.empty(); chunk = scanner->next_chunk()) {
      for (const auto& scanned : chunk) {
        for (const auto& cell : scanned.cells) out[cell.family + ":" + cell.qualifier] = cell.value;
      }
    }
    return out;
  }

  using Cells = std::map<std::string, std::string>;

  Thrift2Options options_ = options_from_env();
  HBaseAdmin admin_{options_};
  std::string table_;
};

TEST_F(HBaseDeletesTest, PutDeletePutOfOneRowInOneBatchEndsWithTheLastPut) {
  const auto t = base_ms();
  write({put("k", t + 1, {{"d", "a", "1"}, {"e", "x", "1"}}), delete_row("k", t + 2),
         put("k", t + 3, {{"d", "b", "3"}})});
  EXPECT_EQ(cells("k"), (Cells{{"d:b", "3"}}));  // the delete removed both families' older cells
}

TEST_F(HBaseDeletesTest, ADeleteMasksEveryPutUpToItsTimeAndNoneAfterWhateverTheArrivalOrder) {
  const auto t = base_ms();
  const std::vector<RowMutation> puts = {put("", t - 1, {{"d", "before", "x"}}), put("", t, {{"e", "same_ms", "x"}}),
                                         put("", t + 1, {{"d", "after", "x"}})};
  // Delete first, in its own batch; delete last; delete in the middle of one batch.
  for (const int where : {0, 1, 2}) {
    const std::string key = "order" + std::to_string(where);
    std::vector<RowMutation> rows;
    for (auto row : puts) {
      row.row = key;
      rows.push_back(std::move(row));
    }
    if (where == 0) {
      write({delete_row(key, t)});
      write(rows);
    } else if (where == 1) {
      write(rows);
      write({delete_row(key, t)});
    } else {
      rows.insert(rows.begin() + 1, delete_row(key, t));
      write(rows);
    }
    // The put in the delete's own millisecond is gone even where it came after the delete: HBase's
    // delete marker at t masks every cell at t.
    EXPECT_EQ(cells(key), (Cells{{"d:after", "x"}})) << key;
  }
}

TEST_F(HBaseDeletesTest, DeleteCellRemovesThatColumnOnlyUpToTheEventsTime) {
  const auto t = base_ms();
  write({put("k", t, {{"d", "a", "1"}, {"d", "b", "1"}, {"e", "a", "1"}})});
  // A later event with d:a null (delete_cell) and a new d:c; a column written later than that
  // event (d:b at t + 5) must survive a delete of it at t + 2 arriving afterwards.
  write({put("k", t + 5, {{"d", "b", "5"}})});
  RowMutation nulls = put("k", t + 2, {{"d", "c", "2"}});
  nulls.deleted_columns = {{"d", "a"}, {"d", "b"}};
  write({nulls});
  EXPECT_EQ(cells("k"), (Cells{{"d:b", "5"}, {"d:c", "2"}, {"e:a", "1"}}));
  // All fields null: only the delete goes out.
  RowMutation all_null = put("k", t + 6, {});
  all_null.deleted_columns = {{"d", "b"}, {"d", "c"}};
  write({all_null});
  EXPECT_EQ(cells("k"), (Cells{{"e:a", "1"}}));
}

// Two writers send one key's events (puts and tombstones, the order_status upsert case) in
// shuffled order and batches, at once: the row ends with the newest event's cells only.
TEST_F(HBaseDeletesTest, TwoSinksWritingOutOfOrderConcurrentlyEndWithTheNewestEvent) {
  const auto t = base_ms();
  constexpr int kEvents = 301;  // odd: the newest is a put
  std::vector<RowMutation> events;
  for (int i = 1; i <= kEvents; ++i) {
    const std::string n = std::to_string(i);
    if (i % 2 == 1) {
      // Each put writes a column of its own besides the shared one: any older put's leftovers show.
      events.push_back(put("order-1", t + i, {{"d", "status", n}, {"e", "event_" + n, n}}));
    } else {
      events.push_back(delete_row("order-1", t + i));
    }
  }
  std::mt19937 random(24);
  std::shuffle(events.begin(), events.end(), random);
  const auto half = events.begin() + kEvents / 2;
  const std::vector<RowMutation> first(events.begin(), half);
  const std::vector<RowMutation> second(half, events.end());
  const auto writer = [&](const std::vector<RowMutation>& rows, unsigned seed) {
    auto sink = make_thrift2_sink(options_);
    std::mt19937 sizes(seed);
    for (std::size_t at = 0; at < rows.size();) {
      const std::size_t n = std::min<std::size_t>(rows.size() - at, 1 + sizes() % 20);
      const std::vector<RowMutation> batch(rows.begin() + static_cast<std::ptrdiff_t>(at),
                                           rows.begin() + static_cast<std::ptrdiff_t>(at + n));
      EXPECT_TRUE(sink->write(table_, batch, {}).empty());
      at += n;
    }
  };
  std::thread a(writer, std::cref(first), 1U);
  std::thread b(writer, std::cref(second), 2U);
  a.join();
  b.join();
  const std::string newest = std::to_string(kEvents);
  EXPECT_EQ(cells("order-1"), (Cells{{"d:status", newest}, {"e:event_" + newest, newest}}));
}

// HBase's gateway refuses a delete of a row key over 32767 bytes for good (its handler's
// IllegalArgumentException): the sink isolates it as for puts, and the rest of the batch is stored.
TEST_F(HBaseDeletesTest, ADeleteHBaseRefusesForGoodIsRejectedAloneAndTheRestIsStored) {
  const auto t = base_ms();
  write({put("a", t, {{"d", "v", "1"}}), put("b", t, {{"d", "v", "1"}})});
  auto sink = make_thrift2_sink(options_);
  const std::vector<RowMutation> rows = {delete_row("a", t + 1), delete_row(std::string(40000, 'k'), t + 1),
                                         delete_row("b", t + 1), put("c", t + 1, {{"d", "v", "1"}})};
  const auto rejected = sink->write(table_, rows, {});
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_NE(rejected[0].reason.find("deleteMultiple"), std::string::npos) << rejected[0].reason;
  EXPECT_TRUE(cells("a").empty());
  EXPECT_TRUE(cells("b").empty());
  EXPECT_EQ(cells("c"), (Cells{{"d:v", "1"}}));
}

TEST_F(HBaseDeletesTest, AMultiFamilyTableIsCreatedWithEachFamilyAndChecked) {
  auto described = admin_.describe_families("default", table_);
  std::sort(described.begin(), described.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  ASSERT_EQ(described.size(), 2u);
  for (const auto& [index, name] : {std::pair{0, "d"}, std::pair{1, "e"}}) {
    EXPECT_EQ(described[static_cast<std::size_t>(index)].name, name);
    EXPECT_EQ(described[static_cast<std::size_t>(index)].ttl_seconds, 600);
    EXPECT_EQ(described[static_cast<std::size_t>(index)].max_versions, 1);
    EXPECT_EQ(described[static_cast<std::size_t>(index)].bloom_filter, "ROW");
  }
  TableSpec spec;
  spec.table = table_;
  spec.families = {family("e"), family("d")};  // order does not matter
  EXPECT_EQ(admin_.ensure_table(spec).outcome, EnsureOutcome::already_matches);
  spec.families = {family("d")};  // a family the config no longer names is no difference
  EXPECT_EQ(admin_.ensure_table(spec).outcome, EnsureOutcome::already_matches);
  spec.families = {family("d"), family("e"), family("f")};
  spec.families[1].ttl = 60s;
  const auto differs = admin_.ensure_table(spec);
  EXPECT_EQ(differs.outcome, EnsureOutcome::differs);
  ASSERT_EQ(differs.differences.size(), 2u);
  EXPECT_NE(differs.differences[0].find("family 'e' TTL is 600 s, config wants 60 s"), std::string::npos)
      << differs.differences[0];
  EXPECT_NE(differs.differences[1].find("has no column family 'f'"), std::string::npos) << differs.differences[1];
}

TEST_F(HBaseDeletesTest, TableStatusNamesEveryMissingFamily) {
  const TableName name{"default", table_};
  EXPECT_EQ(admin_.table_status(name, {"d", "e"}), TableState{});
  EXPECT_EQ(admin_.table_status(name, {"d", "x", "e", "y"}), (TableState{TableStatus::family_missing, {"x", "y"}}));
}

TEST(HBaseDeletesSpec, ASpecWithoutFamiliesOrWithOneTwiceIsRefusedBeforeAnythingIsCreated) {
  HBaseAdmin admin(options_from_env());
  TableSpec spec;
  spec.ns = "never_created_hbingest";
  spec.table = "t";
  spec.families = {};
  EXPECT_THROW(admin.ensure_table(spec), std::invalid_argument);
  spec.families = {family("d"), family("d")};
  EXPECT_THROW(admin.ensure_table(spec), std::invalid_argument);
}

}  // namespace
}  // namespace hbingest::connectors
