// SPDX-License-Identifier: Apache-2.0
// 64-byte aligned buffers (cache line and AVX-512 width).
#pragma once

#include <cstddef>
#include <memory>

namespace ignis {

inline constexpr size_t kAlignment = 64;

inline size_t align_up(size_t n, size_t a = kAlignment) { return (n + a - 1) / a * a; }

void* aligned_malloc(size_t bytes);  // never null: aborts on exhaustion; 0 bytes -> valid ptr
void aligned_free(void* p);

// A refcounted aligned buffer for Tensor ownership.
std::shared_ptr<void> make_aligned_buffer(size_t bytes);
// As make_aligned_buffer, but null instead of aborting when the memory cannot be had.
std::shared_ptr<void> try_make_aligned_buffer(size_t bytes);

}  // namespace ignis
