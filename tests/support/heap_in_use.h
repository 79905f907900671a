#pragma once
// The bytes glibc's malloc has handed out and not had back, for tests of what code keeps on the
// heap. Under a sanitizer malloc is the sanitizer's, which mallinfo2 does not see: such tests skip.

#include <malloc.h>

#include <cstddef>

namespace hbingest::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerAllocator = true;
#else
inline constexpr bool kSanitizerAllocator = false;
#endif
#else
inline constexpr bool kSanitizerAllocator = false;
#endif

// uordblks: the small chunks in use; hblkhd: the chunks malloc mapped on their own (large buffers).
inline std::size_t heap_in_use() {
  const auto info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

}  // namespace hbingest::testing
