// SPDX-License-Identifier: Apache-2.0
// What the depthwise int8 kernels that hold channels in the vector lanes share
// (conv_int8_depthwise_lanes_avx2.cc, _avx512vnni.cc): a 16 x 16 byte transpose in 128-bit
// unpacks, and the filling of their padded plane of one vector per position.
//
// In an unnamed namespace on purpose: each ISA file compiles its own copy with its own flags,
// and internal linkage keeps the linker from merging an AVX-512 copy into AVX2 code.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_int8.h"

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

// 16 channels' input padded into `plane` ([rows x cols] vectors V, one per position; input
// (iy, ix) at (iy + ph, ix + pw)): positions outside the input are `pad`; the input's, 16 at a
// time, are the channels' rows load(j, q0, count) (16 bytes of channel j from position q0, of
// which count are the plane's) transposed, each position's 16 bytes made a vector by widen.
template <class V, class Load, class Widen>
[[gnu::always_inline]] inline void fill_padded_plane(const ConvGeometry2d& g, V pad, V* plane, Load load, Widen widen) {
  const int64_t rows = lanes_padded_rows(g), cols = lanes_padded_cols(g);
  for (int64_t py = 0; py < rows; ++py) {
    const int64_t iy = py - g.ph;
    if (iy < 0 || iy >= g.ih) {
      std::fill_n(plane + py * cols, cols, pad);
      continue;
    }
    std::fill_n(plane + py * cols, std::min(g.pw, cols), pad);
    for (int64_t px = g.pw + g.iw; px < cols; ++px) plane[py * cols + px] = pad;
  }
  const int64_t in_plane = g.ih * g.iw;
  __m128i in[16], out[16];
  int64_t iy = 0, ix = 0;
  for (int64_t q0 = 0; q0 < in_plane; q0 += 16) {
    const int64_t count = std::min<int64_t>(16, in_plane - q0);
    for (int j = 0; j < 16; ++j) in[j] = load(j, q0, count);
    transpose16(in, out);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t py = iy + g.ph, px = ix + g.pw;
      if (py < rows && px < cols) plane[py * cols + px] = widen(out[i]);
      if (++ix == g.iw) ix = 0, ++iy;
    }
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
