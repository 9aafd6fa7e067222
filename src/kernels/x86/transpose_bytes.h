// SPDX-License-Identifier: Apache-2.0
// A 16 x 16 byte transpose in 128-bit unpacks, shared by the depthwise int8 kernels that hold
// channels in the vector lanes (conv_int8_depthwise_lanes_avx2.cc, _avx512vnni.cc).
//
// In an unnamed namespace on purpose: each ISA file compiles its own copy with its own flags,
// and internal linkage keeps the linker from merging an AVX-512 copy into AVX2 code.
#pragma once

#include <immintrin.h>

namespace ignis::kernels::x86 {
namespace {

// 16 rows of 16 bytes to 16 columns: out[j] byte i = in[i] byte j. Four rounds of unpacks
// (bytes, words, dwords, qwords), each doubling the run of one column's bytes.
[[gnu::always_inline]] inline void transpose16(const __m128i in[16], __m128i out[16]) {
  __m128i a[16], b[16];
  for (int k = 0; k < 8; ++k) {  // a[k]: words j = 0-7 of rows 2k, 2k+1; a[8+k]: j = 8-15
    a[k] = _mm_unpacklo_epi8(in[2 * k], in[2 * k + 1]);
    a[8 + k] = _mm_unpackhi_epi8(in[2 * k], in[2 * k + 1]);
  }
  for (int h = 0; h < 2; ++h)  // b[h*8 + 2m + s]: dwords j = h*8 + s*4 + 0..3 of rows 4m..4m+3
    for (int m = 0; m < 4; ++m) {
      b[h * 8 + 2 * m] = _mm_unpacklo_epi16(a[h * 8 + 2 * m], a[h * 8 + 2 * m + 1]);
      b[h * 8 + 2 * m + 1] = _mm_unpackhi_epi16(a[h * 8 + 2 * m], a[h * 8 + 2 * m + 1]);
    }
  // a[q*4 + n*2 + s]: qwords j = q*4 + s*2 + 0..1 of rows 8n..8n+7 (q: the quarter of j).
  for (int q = 0; q < 4; ++q)
    for (int n = 0; n < 2; ++n) {
      const __m128i lo = b[(q / 2) * 8 + 2 * (2 * n) + q % 2], hi = b[(q / 2) * 8 + 2 * (2 * n + 1) + q % 2];
      a[q * 4 + n * 2] = _mm_unpacklo_epi32(lo, hi);
      a[q * 4 + n * 2 + 1] = _mm_unpackhi_epi32(lo, hi);
    }
  for (int q = 0; q < 4; ++q)
    for (int s = 0; s < 2; ++s) {
      out[q * 4 + s * 2] = _mm_unpacklo_epi64(a[q * 4 + s], a[q * 4 + 2 + s]);
      out[q * 4 + s * 2 + 1] = _mm_unpackhi_epi64(a[q * 4 + s], a[q * 4 + 2 + s]);
    }
}

}  // namespace
}  // namespace ignis::kernels::x86
