// SPDX-License-Identifier: Apache-2.0
// The AVX2 body of the x86 Transpose kernel (transpose_avx2.cc); transpose.cc registers it and
// calls it only where AVX2 is available.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace ignis::kernels::x86 {

// Copies the coalesced view (d, s) of 4-byte elements at `src` into the dense row-major `dst`,
// for views whose innermost output dim is strided in the source while output dim k (< last)
// is contiguous there: transpose_view after coalesce_view (kernels/ref/tensor_internal.h).
void transpose_tiles_b32_avx2(void* dst, const void* src, const std::vector<int64_t>& d,
                              const std::vector<int64_t>& s, int k, ThreadPool* pool);

}  // namespace ignis::kernels::x86
