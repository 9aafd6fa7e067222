// SPDX-License-Identifier: Apache-2.0
// AVX2 transpose of 4-byte and 1-byte elements, one strip of output rows of a plane at a time
// (the planes and strips come from the reference's for_each_transpose_strip). A strip moves as
// 8x8 blocks of 4-byte elements (transpose8) or 16x16 blocks of bytes (transpose16): the
// source lines' contiguous runs are loaded, transposed in registers and stored as output rows;
// block edges go element by element. Float loads and stores move any 4-byte pattern unchanged.
#include "kernels/x86/transpose_avx2.h"

#include <immintrin.h>

#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/transpose_bytes.h"

namespace ignis::kernels::x86 {

void transpose_strip_b32_avx2(void* out_v, const void* in_v, int64_t k0, int64_t k1, int64_t ok, int64_t n,
                              int64_t sj) {
  float* out = static_cast<float*>(out_v);
  const float* in = static_cast<const float*>(in_v);
  int64_t kk = k0;
  for (; kk + 8 <= k1; kk += 8) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      __m256 r[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(in + kk + (j + q) * sj);
      transpose8(r);
      for (int q = 0; q < 8; ++q) _mm256_storeu_ps(out + (kk + q) * ok + j, r[q]);
    }
    for (; j < n; ++j)
      for (int q = 0; q < 8; ++q) out[(kk + q) * ok + j] = in[kk + q + j * sj];
  }
  for (; kk < k1; ++kk)
    for (int64_t j = 0; j < n; ++j) out[kk * ok + j] = in[kk + j * sj];
}

void transpose_strip_b8_avx2(void* out_v, const void* in_v, int64_t k0, int64_t k1, int64_t ok, int64_t n,
                             int64_t sj) {
  auto* out = static_cast<uint8_t*>(out_v);
  const auto* in = static_cast<const uint8_t*>(in_v);
  int64_t kk = k0;
  for (; kk + 16 <= k1; kk += 16) {
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      __m128i r[16], t[16];
      for (int q = 0; q < 16; ++q) r[q] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + kk + (j + q) * sj));
      transpose16(r, t);
      for (int q = 0; q < 16; ++q) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (kk + q) * ok + j), t[q]);
    }
    for (; j < n; ++j)
      for (int q = 0; q < 16; ++q) out[(kk + q) * ok + j] = in[kk + q + j * sj];
  }
  for (; kk < k1; ++kk)
    for (int64_t j = 0; j < n; ++j) out[kk * ok + j] = in[kk + j * sj];
}

}  // namespace ignis::kernels::x86
