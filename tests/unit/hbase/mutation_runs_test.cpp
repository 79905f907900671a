// How a batch of mixed puts and deletes is cut into putMultiple and deleteMultiple calls.

#include "hbingest/connectors/mutation_runs.h"

#include <gtest/gtest.h>

#include <vector>

namespace hbingest::connectors {
namespace {

RowMutation put(std::string row) { return {std::move(row), {{"d", "q", "v"}}, 1, std::nullopt}; }

RowMutation del(std::string row) {
  RowMutation mutation{std::move(row), {}, 1, std::nullopt};
  mutation.kind = MutationKind::delete_row;
  return mutation;
}

RowMutation put_deleting(std::string row, bool with_cells = true) {
  RowMutation mutation = put(std::move(row));
  if (!with_cells) mutation.cells.clear();
  mutation.deleted_columns = {{"d", "gone"}};
  return mutation;
}

using Runs = std::vector<MutationRun>;
constexpr RunKind P = RunKind::puts;
constexpr RunKind D = RunKind::deletes;

TEST(MutationRuns, OnlyPutsAreOneRunAndNoRowsNone) {
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{put("a"), put("b"), put("a")}), (Runs{{P, 0, 3}}));
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{}), Runs{});
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{del("a"), del("b")}), (Runs{{D, 0, 2}}));
}

TEST(MutationRuns, PutDeletePutOfOneRowAreThreeCallsInOrder) {
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{put("a"), del("a"), put("a")}),
            (Runs{{P, 0, 1}, {D, 1, 2}, {P, 2, 3}}));
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{del("a"), put("b"), put("c"), del("b"), del("c"), put("a")}),
            (Runs{{D, 0, 1}, {P, 1, 3}, {D, 3, 5}, {P, 5, 6}}));
}

TEST(MutationRuns, APutWithDeletedColumnsJoinsTheCurrentRunFirst) {
  // After puts: its cells continue the puts, its column deletes open a delete run.
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{put("a"), put_deleting("b"), put("c")}),
            (Runs{{P, 0, 2}, {D, 1, 2}, {P, 2, 3}}));
  // After deletes: its column deletes continue them, its cells open a put run.
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{del("a"), put_deleting("b"), put("c")}),
            (Runs{{D, 0, 2}, {P, 1, 3}}));
  // First in the batch: cells first.
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{put_deleting("a")}), (Runs{{P, 0, 1}, {D, 0, 1}}));
}

TEST(MutationRuns, AllNullFieldsIsOnlyADeleteAndAnEmptyPutIsStillSent) {
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{put("a"), put_deleting("b", false), put("c")}),
            (Runs{{P, 0, 1}, {D, 1, 2}, {P, 2, 3}}));
  // Nothing to write and nothing to delete: sent as before, for HBase to refuse it (rejected row).
  const RowMutation empty{"e", {}, 1, std::nullopt};
  EXPECT_EQ(mutation_runs(std::vector<RowMutation>{empty}), (Runs{{P, 0, 1}}));
}

TEST(MutationRuns, EveryPartIsInExactlyOneRunInBatchOrder) {
  // Deterministic mix of every shape; each row's parts appear once, and runs never go backwards.
  std::vector<RowMutation> rows;
  for (int i = 0; i < 200; ++i) {
    switch ((i * 7 + i / 3) % 4) {
      case 0:
        rows.push_back(put("r"));
        break;
      case 1:
        rows.push_back(del("r"));
        break;
      case 2:
        rows.push_back(put_deleting("r"));
        break;
      default:
        rows.push_back(put_deleting("r", false));
        break;
    }
  }
  std::vector<int> puts(rows.size()), deletes(rows.size());
  std::size_t last_begin = 0;
  for (const auto& run : mutation_runs(rows)) {
    ASSERT_LT(run.begin, run.end);
    ASSERT_LE(run.end, rows.size());
    ASSERT_GE(run.begin, last_begin);
    last_begin = run.begin;
    for (std::size_t i = run.begin; i < run.end; ++i) ++(run.kind == P ? puts : deletes)[i];
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool has_put = rows[i].kind == MutationKind::put && !rows[i].cells.empty();
    const bool has_delete = rows[i].kind == MutationKind::delete_row || !rows[i].deleted_columns.empty();
    EXPECT_EQ(puts[i], has_put ? 1 : 0) << i;
    EXPECT_EQ(deletes[i], has_delete ? 1 : 0) << i;
  }
}

}  // namespace
}  // namespace hbingest::connectors
