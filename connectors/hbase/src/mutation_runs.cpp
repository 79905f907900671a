#include "hbingest/connectors/mutation_runs.h"

namespace hbingest::connectors {

std::vector<MutationRun> mutation_runs(std::span<const RowMutation> rows) {
  std::vector<MutationRun> runs;
  const auto add = [&](RunKind kind, std::size_t index) {
    if (!runs.empty() && runs.back().kind == kind && runs.back().end == index) {
      runs.back().end = index + 1;
    } else {
      runs.push_back({kind, index, index + 1});
    }
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowMutation& row = rows[i];
    if (row.kind == MutationKind::delete_row) {
      add(RunKind::deletes, i);
      continue;
    }
    // A put without cells and without column deletes is still sent: HBase refuses it ("No columns
    // to insert") and the sink reports it as rejected, as it did before deletes existed.
    const bool put_part = !row.cells.empty() || row.deleted_columns.empty();
    const bool delete_part = !row.deleted_columns.empty();
    if (put_part && delete_part && !runs.empty() && runs.back().kind == RunKind::deletes) {
      add(RunKind::deletes, i);
      add(RunKind::puts, i);
    } else {
      if (put_part) add(RunKind::puts, i);
      if (delete_part) add(RunKind::deletes, i);
    }
  }
  return runs;
}

}  // namespace hbingest::connectors
