// SPDX-License-Identifier: Apache-2.0
// The int8 GEMM tile for AVX-512 VNNI: up to 6 rows x 2 panels (64 columns) of C in 24 zmm
// accumulators. Each depth quad broadcasts 4 bytes of a row of A and multiplies them into a
// packed quad row of each panel (32 columns x 4 depths = two zmm) with vpdpbusd, which sums
// the four u8 x s8 products exactly into each int32 lane. 24 independent accumulators hide
// vpdpbusd's latency; with the 4 B vectors and a broadcast they fit the 32 registers. The
// small loops carry unroll pragmas: left rolled, GCC keeps the accumulator array in memory
// (measured 3-4x slower).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/requantize_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kRows = 6;

// 4 bytes of A at `p`, of which only `valid` (1..4) may be read.
inline int32_t load_quad(const uint8_t* p, int valid) {
  int32_t v = 0;
  std::memcpy(&v, p, static_cast<size_t>(valid));
  return v;
}

// Requantizes 16 int32 sums of row i at column j (gemm_int8.h; requantize_avx512.h) and
// stores them as bytes.
inline void store_requantized(const Int8GemmArgs& g, const RequantAvx512& rq, int64_t i, int64_t j, __m512i acc,
                              __mmask16 mask) {
  if (g.q_bias) acc = _mm512_add_epi32(acc, _mm512_set1_epi32(g.q_bias[i]));
  const __m512 m = g.q_row_scale ? _mm512_set1_ps(g.q_row_scale[i]) : _mm512_maskz_loadu_ps(mask, g.q_col_scale + j);
  _mm512_mask_cvtepi32_storeu_epi8(static_cast<uint8_t*>(g.c_q) + i * g.ldc + j, mask, rq.values(acc, m));
}

// Stores one 16-column half of row i: the correction, then int32, requantized or scaled float.
// `g` is the tile's own copy: byte stores through c_q may alias anything the caller's
// arguments point to, so fields read through a reference would be reloaded after every store.
inline void store_half(const Int8GemmArgs& g, const RequantAvx512& rq, int64_t i, int64_t j, __m512i acc,
                       __mmask16 mask) {
  if (g.row_sum && g.col_shift) {
    const __m512i shift = _mm512_maskz_loadu_epi32(mask, g.col_shift + j);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(shift, _mm512_set1_epi32(g.row_sum[i])));
  }
  if (g.row_zp && g.row_zp[i] != 0) {
    const __m512i corr = _mm512_maskz_loadu_epi32(mask, g.col_corr + j);
    acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(corr, _mm512_set1_epi32(g.row_zp[i])));
  }
  if (g.col_offset) acc = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(mask, g.col_offset + j));
  if (g.c_i32) {
    _mm512_mask_storeu_epi32(g.c_i32 + i * g.ldc + j, mask, acc);
    return;
  }
  if (g.c_q) {
    store_requantized(g, rq, i, j, acc, mask);
    return;
  }
  // The maskz form: GCC 12 warns that the plain one reads an undefined register.
  __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, acc), _mm512_maskz_loadu_ps(mask, g.col_scale + j));
  if (g.row_scale) v = _mm512_mul_ps(v, _mm512_set1_ps(g.row_scale[i]));
  if (g.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, g.bias + j));
  _mm512_mask_storeu_ps(g.c_f32 + i * g.ldc + j, mask, v);
}

// kR rows x kP panels (32 columns each) of C.
template <int kR, int kP>
void tile(const Int8GemmArgs& g, int64_t i0, int64_t panel) {
  const PackedInt8B& b = *g.b;
  const int8_t* bp[kP];
  #pragma GCC unroll 16
  for (int p = 0; p < kP; ++p) bp[p] = b.panel(panel + p);
  const int64_t k = b.k();
  const int64_t full = k / kInt8Quad;
  __m512i acc[kR][2 * kP];
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_setzero_si512();
  const uint8_t* a = g.a + i0 * g.lda;
  const int64_t quads = b.quads();
  for (int64_t q = 0; q < quads; ++q) {
    __m512i bv[2 * kP];
    #pragma GCC unroll 16
    for (int p = 0; p < kP; ++p) {
      bv[2 * p] = _mm512_loadu_si512(bp[p] + q * 128);
      bv[2 * p + 1] = _mm512_loadu_si512(bp[p] + q * 128 + 64);
    }
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      // B is zero past K, so the last quad's missing bytes of A only need to be readable.
      int32_t quad;
      if (q < full) std::memcpy(&quad, a + r * g.lda + q * kInt8Quad, sizeof quad);
      else quad = load_quad(a + r * g.lda + q * kInt8Quad, static_cast<int>(k - full * kInt8Quad));
      const __m512i av = _mm512_set1_epi32(quad);
      #pragma GCC unroll 16
      for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], av, bv[c]);
    }
  }
  const Int8GemmArgs args = g;
  const RequantAvx512 rq(args.q_zero_point, args.q_min, args.q_max, args.q_signed);
  #pragma GCC unroll 16
  for (int p = 0; p < kP; ++p) {
    const int64_t j0 = (panel + p) * kInt8PanelCols;
    const int64_t cols = std::min<int64_t>(kInt8PanelCols, b.n() - j0);
    const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
    const __mmask16 m1 =
        cols >= 32 ? __mmask16(0xFFFF) : cols > 16 ? static_cast<__mmask16>((1u << (cols - 16)) - 1) : 0;
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      store_half(args, rq, i0 + r, j0, acc[r][2 * p], m0);
      if (m1) store_half(args, rq, i0 + r, j0 + 16, acc[r][2 * p + 1], m1);
    }
  }
}

// Rows [i, i + rows) x panels [p0, p1): pairs of panels, then a last single one.
template <int kR>
void row_block(const Int8GemmArgs& g, int64_t i, int64_t p0, int64_t p1) {
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) tile<kR, 2>(g, i, p);
  if (p < p1) tile<kR, 1>(g, i, p);
}

void range(const Int8GemmArgs& g, int64_t i0, int64_t i1, int64_t p0, int64_t p1) {
  for (int64_t i = i0; i < i1; i += kRows) {
    switch (std::min<int64_t>(kRows, i1 - i)) {
      case 6: row_block<6>(g, i, p0, p1); break;
      case 5: row_block<5>(g, i, p0, p1); break;
      case 4: row_block<4>(g, i, p0, p1); break;
      case 3: row_block<3>(g, i, p0, p1); break;
      case 2: row_block<2>(g, i, p0, p1); break;
      default: row_block<1>(g, i, p0, p1); break;
    }
  }
}

}  // namespace

const Int8GemmBackend& int8_gemm_backend_vnni() {
  static const Int8GemmBackend backend{.name = "avx512vnni_8x32", .range = range};
  return backend;
}

}  // namespace ignis::kernels::x86
