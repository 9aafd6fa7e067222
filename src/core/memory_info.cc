// SPDX-License-Identifier: Apache-2.0
#include "core/memory_info.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

namespace ignis {

std::optional<size_t> tensor_bytes(DType dtype, const Shape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > kMax / d) {
      // Overflows unless a later dim is 0 (an empty tensor).
      for (int64_t e : shape)
        if (e == 0) return 0;
      return std::nullopt;
    }
    n *= d;
  }
  const auto size = static_cast<int64_t>(dtype_size(dtype));
  if (size != 0 && n > kMax / size) return std::nullopt;
  return static_cast<size_t>(n * size);
}

namespace {

size_t read_physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && static_cast<unsigned long>(pages) <= SIZE_MAX / static_cast<unsigned long>(page_size))
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  unsigned long long kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemTotal:") return static_cast<size_t>(kib) * 1024;
  return 0;
}

}  // namespace

size_t physical_memory_bytes() {
  static const size_t bytes = read_physical_memory();
  return bytes;
}

std::string format_bytes(size_t bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 999.95 && unit < 6) {
    v /= 1000.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 99.95 ? "%.0f %s" : "%.1f %s", v, kUnits[unit]);
  return buf;
}

}  // namespace ignis
