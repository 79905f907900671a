#pragma once
// The largest single allocation made through the global operator new since the last reset: for tests
// that a hostile length (a reply's, a frame's) is refused before anything that large is allocated.
// Add largest_allocation.cpp to the test's sources: it replaces the global operator new. Under
// ThreadSanitizer, whose runtime defines operator new itself (a second definition does not link),
// nothing is counted and counts_allocations() is false: the calls and their errors are still checked.

#include <cstddef>

namespace hbingest::test_support {

bool counts_allocations();
std::size_t largest_allocation();
void reset_largest_allocation();

}  // namespace hbingest::test_support
