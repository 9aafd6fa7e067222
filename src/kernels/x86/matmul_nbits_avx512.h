// SPDX-License-Identifier: Apache-2.0
// What the AVX-512 MatMulNBits tiles (matmul_nbits_avx512vnni.cc, matmul_nbits_float_avx512.cc)
// share: writing one 16-column group of R rows. Internal linkage: each ISA translation unit
// keeps its own copy.
#pragma once

#include <immintrin.h>

#include "kernels/x86/matmul_nbits.h"

namespace ignis::kernels::x86 {

namespace {

// Y[r][col + j] = acc[r][j] + bias[col + j] for the columns below n (col = 16g).
template <int R>
void store_group_avx512(const __m512 (&acc)[R], const float* bias, float* y, int64_t ldy, int64_t col, int64_t n) {
  const int64_t count = n - col < kNbitsGroupCols ? n - col : kNbitsGroupCols;
  const __mmask16 m = static_cast<__mmask16>((1u << count) - 1u);
  const __m512 b16 = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + col) : _mm512_setzero_ps();
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ldy + col, m, _mm512_add_ps(acc[r], b16));
}

}  // namespace

}  // namespace ignis::kernels::x86
