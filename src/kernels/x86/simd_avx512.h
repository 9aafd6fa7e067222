// SPDX-License-Identifier: Apache-2.0
// Small AVX-512 building blocks shared by the x86 kernel files built with AVX-512 flags.
// Internal linkage on purpose (see gemm_blocked.h).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace ignis::kernels::x86 {
namespace {

// Lanes [lo, hi) of 16.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16);
  hi = std::clamp<int64_t>(hi, lo, 16);
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// r[i] = row i of a 16x16 block in, column i of it out (zero-masked forms with every lane
// selected: GCC 12 flags the unmasked shuffles' pass-through operand as uninitialized). Every step rewrites the registers
// it reads in place (groups of 2, 4, then 4), so no second array of 16 competes for the 32
// zmm registers (that spilled and cost 3x).
inline void transpose16(__m512 r[16]) {
  for (int i = 0; i < 16; i += 2) {
    const __m512 lo = _mm512_maskz_unpacklo_ps(0xFFFF, r[i], r[i + 1]);
    r[i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[i], r[i + 1]);
    r[i] = lo;
  }
  // In each 128-bit block L, r[i + q] gets column 4L + q of rows i .. i + 3.
  for (int i = 0; i < 16; i += 4) {
    const __m512 a = r[i], b = r[i + 1], c = r[i + 2], d = r[i + 3];
    r[i] = _mm512_maskz_shuffle_ps(0xFFFF, a, c, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_maskz_shuffle_ps(0xFFFF, a, c, _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_maskz_shuffle_ps(0xFFFF, b, d, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_maskz_shuffle_ps(0xFFFF, b, d, _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Column 4L + q is block L of r[q], r[4 + q], r[8 + q], r[12 + q].
  for (int q = 0; q < 4; ++q) {
    const __m512 x0 = _mm512_maskz_shuffle_f32x4(0xFFFF, r[q], r[4 + q], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 x1 = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 + q], r[12 + q], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 x2 = _mm512_maskz_shuffle_f32x4(0xFFFF, r[q], r[4 + q], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 x3 = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 + q], r[12 + q], _MM_SHUFFLE(3, 2, 3, 2));
    r[q] = _mm512_maskz_shuffle_f32x4(0xFFFF, x0, x1, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, x0, x1, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, x2, x3, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, x2, x3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
