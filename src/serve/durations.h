// SPDX-License-Identifier: Apache-2.0
// Durations as the statistics (nanoseconds) and the metrics (seconds) report them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace ignis::serve {

inline uint64_t nanos(std::chrono::steady_clock::duration d) {
  return static_cast<uint64_t>(std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
}
inline double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace ignis::serve
