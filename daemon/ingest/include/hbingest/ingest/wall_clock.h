#pragma once
// The one place the daemon reads wall-clock time; libraries take it as a parameter.

#include <chrono>
#include <cstdint>

namespace hbingest::ingest {

inline std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace hbingest::ingest
