#pragma once
// Scan planning over a loaded spec: exact [start, stop) ranges for equality + time-range queries.

#include <string>
#include <vector>

#include "hbingest/keyspec/key_spec.h"
#include "spec_model.h"

namespace hbingest::keyspec::detail {

std::vector<ScanRange> plan_scan(const SpecModel& spec, const PlanRequest& request);
std::vector<ScanRange> plan_full_table(const SpecModel& spec, int splits);
std::vector<std::string> split_keys(const SpecModel& spec);
// Smallest byte string greater than every string starting with `prefix`; empty = end of table.
std::string prefix_successor(std::string prefix);

}  // namespace hbingest::keyspec::detail
