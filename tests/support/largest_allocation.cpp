#include "largest_allocation.h"

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_THREAD__)
#define HBINGEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HBINGEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef HBINGEST_COUNTS_ALLOCATIONS
#define HBINGEST_COUNTS_ALLOCATIONS 1
#endif

namespace {
std::atomic<std::size_t> g_largest_allocation{0};
}  // namespace

namespace hbingest::test_support {

bool counts_allocations() { return HBINGEST_COUNTS_ALLOCATIONS != 0; }
std::size_t largest_allocation() { return g_largest_allocation.load(); }
void reset_largest_allocation() { g_largest_allocation = 0; }

}  // namespace hbingest::test_support

#if HBINGEST_COUNTS_ALLOCATIONS
namespace {

void* allocate(std::size_t size) {
  std::size_t seen = g_largest_allocation.load(std::memory_order_relaxed);
  while (size > seen && !g_largest_allocation.compare_exchange_weak(seen, size, std::memory_order_relaxed)) {
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif
