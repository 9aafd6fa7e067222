// SPDX-License-Identifier: Apache-2.0
#include "core/aligned_alloc.h"

#include <cstdio>
#include <cstdlib>

namespace ignis {

void* aligned_malloc(size_t bytes) {
  void* p = std::aligned_alloc(kAlignment, align_up(bytes == 0 ? 1 : bytes));
  if (p == nullptr) {
    std::fprintf(stderr, "ignis: out of memory allocating %zu bytes\n", bytes);
    std::abort();
  }
  return p;
}

void aligned_free(void* p) { std::free(p); }

std::shared_ptr<void> make_aligned_buffer(size_t bytes) {
  return std::shared_ptr<void>(aligned_malloc(bytes), aligned_free);
}

}  // namespace ignis
