#pragma once
// How the Thrift2 sink cuts a batch of mixed puts and deletes into calls: putMultiple takes only
// puts, deleteMultiple only deletes, so a batch goes out as consecutive runs of one kind, in the
// batch's order. Pure, for tests.

#include <cstddef>
#include <span>
#include <vector>

#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

enum class RunKind { puts, deletes };

// rows[begin, end) sent in one call of `kind`: for puts the rows' cells, for deletes each row's
// delete part (a delete_row, or a put's deleted_columns).
struct MutationRun {
  RunKind kind;
  std::size_t begin;
  std::size_t end;
  friend bool operator==(const MutationRun&, const MutationRun&) = default;
};

// Every part of every row in exactly one run, a row's parts in runs of the batch's order, so a
// row's put, delete, put reach HBase in that order. A put with deleted_columns has two parts (its
// cells and its column deletes, on different columns at one timestamp, so their order does not
// matter): the one that continues the current run comes first, so the common batch of puts is one
// run. A put with deleted_columns and no cells has only its delete part.
std::vector<MutationRun> mutation_runs(std::span<const RowMutation> rows);

}  // namespace hbingest::connectors
