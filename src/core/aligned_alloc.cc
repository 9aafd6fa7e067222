// SPDX-License-Identifier: Apache-2.0
#include "core/aligned_alloc.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ignis {

namespace {

// Null when the allocation fails, including sizes whose aligned size overflows.
void* try_aligned_malloc(size_t bytes) {
  if (bytes > SIZE_MAX - kAlignment) return nullptr;
  return std::aligned_alloc(kAlignment, align_up(bytes == 0 ? 1 : bytes));
}

}  // namespace

void* aligned_malloc(size_t bytes) {
  void* p = try_aligned_malloc(bytes);
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

std::shared_ptr<void> try_make_aligned_buffer(size_t bytes) {
  void* p = try_aligned_malloc(bytes);
  if (p == nullptr) return nullptr;
  return std::shared_ptr<void>(p, aligned_free);
}

}  // namespace ignis
