// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the AVX-512 Winograd convolutions, F(4x4, 3x3) (conv_winograd_f4x4_avx512.cc,
// and on the blocked layout conv_blocked_winograd_avx512.cc) and F(2x2, 3x3) (conv_winograd_f2x2_avx512.cc); the instruction-set-free walk over row segments
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

// B^T of one 6-vector (rows of the 6x6 B^T of F(4x4, 3x3)), the input transform per axis:
//   t0 = 4 d0 - 5 d2 + d4          t3 = (d4 - d2) + 2 (d3 - d1)
//   t1 = (d4 - 4 d2) + (d3 - 4 d1)  t4 = (d4 - d2) - 2 (d3 - d1)
//   t2 = (d4 - 4 d2) - (d3 - 4 d1)  t5 = 4 d1 - 5 d3 + d5
inline void input4_1d(const __m512 d[6], __m512 t[6]) {
  const __m512 four = _mm512_set1_ps(4.0f), five = _mm512_set1_ps(5.0f), two = _mm512_set1_ps(2.0f);
  const __m512 a = _mm512_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
  const __m512 b = _mm512_fnmadd_ps(four, d[1], d[3]);  // d3 - 4 d1
  const __m512 c = _mm512_sub_ps(d[4], d[2]);
  const __m512 e = _mm512_mul_ps(two, _mm512_sub_ps(d[3], d[1]));
  t[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));
  t[1] = _mm512_add_ps(a, b);
  t[2] = _mm512_sub_ps(a, b);
  t[3] = _mm512_add_ps(c, e);
  t[4] = _mm512_sub_ps(c, e);
  t[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));
}

// A^T of one 6-vector (F(4x4, 3x3)'s output transform per axis):
//   o0 = m0 + (m1 + m2) + (m3 + m4)   o2 = (m1 + m2) + 4 (m3 + m4)
//   o1 = (m1 - m2) + 2 (m3 - m4)       o3 = (m1 - m2) + 8 (m3 - m4) + m5
inline void output4_1d(const __m512 m[6], __m512 o[4]) {
  const __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  const __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);
  o[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.0f), d34, d12);
  o[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.0f), s34, s12);
  o[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.0f), d34, d12), m[5]);
}

}  // namespace
}  // namespace ignis::kernels::x86
