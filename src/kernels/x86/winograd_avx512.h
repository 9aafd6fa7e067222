// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the AVX-512 Winograd convolutions, F(4x4, 3x3) (conv_winograd_f4x4_avx512.cc)
// and F(2x2, 3x3) (conv_winograd_f2x2_avx512.cc); the instruction-set-free walk over row segments
// is in conv_winograd_driver.h. In an unnamed namespace like the other
// per-ISA headers: only files built with AVX-512 flags include it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_winograd_driver.h"
#include "kernels/x86/gemm.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {
namespace {

// 16 floats of input row `row` (null: a padding row) starting at column s, zeros outside
// [0, iw). Never forms a pointer outside the row.
inline __m512 load_padded(const float* row, int64_t s, int64_t iw) {
  if (!row) return _mm512_setzero_ps();
  const __mmask16 m = lanes(-s, iw - s);
  if (!m) return _mm512_setzero_ps();
  if (s >= 0) return _mm512_maskz_loadu_ps(m, row + s);
  return _mm512_maskz_expandloadu_ps(m, row);  // lanes [-s, ..) take row[0, ..)
}

}  // namespace
}  // namespace ignis::kernels::x86
