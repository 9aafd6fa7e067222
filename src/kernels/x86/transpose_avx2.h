// SPDX-License-Identifier: Apache-2.0
// The AVX2 body of the x86 Transpose kernel (transpose_avx2.cc); transpose.cc registers it and
// calls it only where AVX2 is available.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// Output rows [k0, k1) of one transpose plane of 4-byte elements: out[kk * ok + j] =
// in[kk + j * sj] for j < n (the plane's source is contiguous along kk).
void transpose_strip_b32_avx2(void* out, const void* in, int64_t k0, int64_t k1, int64_t ok, int64_t n, int64_t sj);
// The same for 1-byte elements.
void transpose_strip_b8_avx2(void* out, const void* in, int64_t k0, int64_t k1, int64_t ok, int64_t n, int64_t sj);

}  // namespace ignis::kernels::x86
