// SPDX-License-Identifier: Apache-2.0
// Small AVX2 building blocks shared by the x86 kernel files: tail masks and the 8x8 float
// transpose. Internal linkage on purpose (see gemm_blocked.h): files built with different
// ISA flags each keep their own copy.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace ignis::kernels::x86 {
namespace {

alignas(64) constexpr int32_t kLaneMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
inline __m256i lane_mask(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneMaskTable + 8 - n));
}

// 8x8 transpose of r[0..7] in place.
inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// One kNr-column panel of a packed GEMM B operand from a transposed source: d[p * kNr + j] =
// src[j * ld + p] for depth steps p in [0, kc) and columns j < cols, zero for j >= cols. Whole
// 8x8 blocks move through transpose8.
template <int kNr>
inline void pack_transposed_panel(const float* src, int64_t ld, int cols, int64_t kc, float* d) {
  int64_t p = 0;
  if (cols == kNr) {
    for (; p + 8 <= kc; p += 8) {
      for (int h = 0; h < kNr / 8; ++h) {
        __m256 r[8];
        for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + (h * 8 + j) * ld + p);
        transpose8(r);
        for (int q = 0; q < 8; ++q) _mm256_store_ps(d + (p + q) * kNr + h * 8, r[q]);
      }
    }
  }
  for (; p < kc; ++p)
    for (int j = 0; j < kNr; ++j) d[p * kNr + j] = j < cols ? src[j * ld + p] : 0.0f;
}

}  // namespace
}  // namespace ignis::kernels::x86
