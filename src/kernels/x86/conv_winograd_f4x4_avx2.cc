// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3) convolution with AVX2 transforms and the 4x24 sgemm: the scheme of
// conv_winograd_f4x4_avx512.cc (its comment has the algebra and the precision measured) with
// transforms vectorized across 8 horizontally adjacent tiles of one tile row; the run around
// them is conv_winograd_driver.h's.
//
// The input rows a tile row reads are split into 4 phases (columns 4j + p), so that tap column
// c of tile j is phase c % 4 at index j + c / 4: 32 padded columns (8 tiles) are loaded as 4
// vectors and deinterleaved with a 4x4 transpose in each 128-bit half and one lane permute.
// The output transform interleaves its 4 column vectors back into 32 contiguous floats the
// same way.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_winograd.h"
#include "kernels/x86/conv_winograd_driver.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

// 8 floats of input row `row` (null: a padding row) starting at column s, zeros outside
// [0, iw). Never forms a pointer outside the row.
inline __m256 load_padded8(const float* row, int64_t s, int64_t iw) {
  if (!row || s >= iw || s + 8 <= 0) return _mm256_setzero_ps();
  if (s >= 0 && s + 8 <= iw) return _mm256_loadu_ps(row + s);
  alignas(32) float lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = s + l >= 0 && s + l < iw ? row[s + l] : 0.0f;
  return _mm256_load_ps(lanes);
}

// The 6-vector transforms of F(4x4, 3x3), as in conv_winograd_f4x4_avx512.cc:
//   t0 = 4 d0 - 5 d2 + d4          t3 = (d4 - d2) + 2 (d3 - d1)
//   t1 = (d4 - 4 d2) + (d3 - 4 d1)  t4 = (d4 - d2) - 2 (d3 - d1)
//   t2 = (d4 - 4 d2) - (d3 - 4 d1)  t5 = 4 d1 - 5 d3 + d5
inline void input_1d(const __m256 d[6], __m256 t[6]) {
  const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f), two = _mm256_set1_ps(2.0f);
  const __m256 a = _mm256_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
  const __m256 b = _mm256_fnmadd_ps(four, d[1], d[3]);  // d3 - 4 d1
  const __m256 c = _mm256_sub_ps(d[4], d[2]);
  const __m256 e = _mm256_mul_ps(two, _mm256_sub_ps(d[3], d[1]));
  t[0] = _mm256_fmadd_ps(four, d[0], _mm256_fnmadd_ps(five, d[2], d[4]));
  t[1] = _mm256_add_ps(a, b);
  t[2] = _mm256_sub_ps(a, b);
  t[3] = _mm256_add_ps(c, e);
  t[4] = _mm256_sub_ps(c, e);
  t[5] = _mm256_fmadd_ps(four, d[1], _mm256_fnmadd_ps(five, d[3], d[5]));
}

//   o0 = m0 + (m1 + m2) + (m3 + m4)   o2 = (m1 + m2) + 4 (m3 + m4)
//   o1 = (m1 - m2) + 2 (m3 - m4)       o3 = (m1 - m2) + 8 (m3 - m4) + m5
inline void output_1d(const __m256 m[6], __m256 o[4]) {
  const __m256 s12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
  const __m256 s34 = _mm256_add_ps(m[3], m[4]), d34 = _mm256_sub_ps(m[3], m[4]);
  o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
  o[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d34, d12);
  o[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), s34, s12);
  o[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d34, d12), m[5]);
}

// Input transform of the tiles [tx0, tx1) of tile row ty of one channel plane `x`:
// V_k[tx - tx0] for the 36 points k, V_k = v + k * v_stride.
void input_tile_row(const ConvGeometry2d& g, const Grid4& grid, const float* x, int64_t ty, int64_t tx0, int64_t tx1,
                    float* q, float* v, int64_t v_stride) {
  // After the in-half transposes, phase vectors hold indices [0 2 4 6 | 1 3 5 7]: this puts
  // them in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const float* rows[6];
  for (int r = 0; r < 6; ++r) {
    const int64_t iy = 4 * ty - g.ph + r;
    rows[r] = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
  }
  // 1. Vertical transform of the 6 input rows, deinterleaved into phases, for phase indices
  //    [8 * q0, 8 * (q1 + 1)): q[(u * 4 + p) * qlen + j].
  const int64_t q0 = tx0 / 8, q1 = tx1 / 8;
  for (int64_t qc = q0; qc <= q1; ++qc) {
    __m256 d[4][6];  // [phase][input row]
    for (int r = 0; r < 6; ++r) {
      const int64_t s = 32 * qc - g.pw;
      // a_i holds the 4 phases of indices 2i and 2i + 1.
      const __m256 a0 = load_padded8(rows[r], s, g.iw), a1 = load_padded8(rows[r], s + 8, g.iw);
      const __m256 a2 = load_padded8(rows[r], s + 16, g.iw), a3 = load_padded8(rows[r], s + 24, g.iw);
      const __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
      const __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
      d[0][r] = _mm256_shuffle_ps(t0, t2, 0x44);
      d[1][r] = _mm256_shuffle_ps(t0, t2, 0xEE);
      d[2][r] = _mm256_shuffle_ps(t1, t3, 0x44);
      d[3][r] = _mm256_shuffle_ps(t1, t3, 0xEE);
    }
    for (int p = 0; p < 4; ++p) {
      __m256 t[6];
      input_1d(d[p], t);
      for (int u = 0; u < 6; ++u)
        _mm256_storeu_ps(q + (u * 4 + p) * grid.qlen + 8 * qc, _mm256_permutevar8x32_ps(t[u], order));
    }
  }
  // 2. Horizontal transform, 8 tiles at a time: tap column c of tile j is phase c % 4 at
  //    index j + c / 4.
  for (int64_t tx = tx0; tx < tx1; tx += 8) {
    const __m256i m = lane_mask(static_cast<int>(std::min<int64_t>(8, tx1 - tx)));
    float* vt = v + (tx - tx0);
    for (int u = 0; u < 6; ++u) {
      // Masked loads: lanes past tx1 would read phase indices step 1 never wrote.
      const float* qu = q + u * 4 * grid.qlen + tx;
      const __m256 d[6] = {_mm256_maskload_ps(qu, m),
                           _mm256_maskload_ps(qu + grid.qlen, m),
                           _mm256_maskload_ps(qu + 2 * grid.qlen, m),
                           _mm256_maskload_ps(qu + 3 * grid.qlen, m),
                           _mm256_maskload_ps(qu + 1, m),
                           _mm256_maskload_ps(qu + grid.qlen + 1, m)};
      __m256 t[6];
      input_1d(d, t);
      for (int w = 0; w < 6; ++w) _mm256_maskstore_ps(vt + (u * 6 + w) * v_stride, m, t[w]);
    }
  }
}

// Output transform of tiles [tx0, tx1) of tile row ty, one output channel plane y; M_k of the
// first tile at m + k * m_stride.
void output_tile_row(const ConvGeometry2d& g, const float* m, int64_t m_stride, int64_t ty, int64_t tx0, int64_t tx1,
                     const Winograd4Output& op, float* y) {
  const __m256 bias = _mm256_set1_ps(op.bias);
  for (int64_t tx = tx0; tx < tx1; tx += 8) {
    const float* mt = m + (tx - tx0);
    // Masked loads: columns past the block's last tile were never written by the GEMM.
    const __m256i tiles = lane_mask(static_cast<int>(std::min<int64_t>(8, tx1 - tx)));
    // Columns first: w[i][v] = sum_u A^T[i][u] M[u][v].
    __m256 w[4][6];
    for (int v = 0; v < 6; ++v) {
      __m256 col[6], o[4];
      for (int u = 0; u < 6; ++u) col[u] = _mm256_maskload_ps(mt + (u * 6 + v) * m_stride, tiles);
      output_1d(col, o);
      for (int i = 0; i < 4; ++i) w[i][v] = o[i];
    }
    const int64_t x0 = 4 * tx, n = std::min<int64_t>(4 * std::min<int64_t>(8, tx1 - tx), g.ow - x0);
    for (int i = 0; i < 4; ++i) {
      const int64_t oy = 4 * ty + i;
      if (oy >= g.oh) break;
      __m256 o[4];
      output_1d(w[i], o);
      for (int j = 0; j < 4; ++j) o[j] = _mm256_add_ps(o[j], bias);
      // o[j] lane t is column j of tile t: interleave into tiles [0 1], [2 3], [4 5], [6 7].
      const __m256 a = _mm256_unpacklo_ps(o[0], o[1]), b = _mm256_unpackhi_ps(o[0], o[1]);
      const __m256 c = _mm256_unpacklo_ps(o[2], o[3]), d = _mm256_unpackhi_ps(o[2], o[3]);
      const __m256 e0 = _mm256_shuffle_ps(a, c, 0x44), e1 = _mm256_shuffle_ps(a, c, 0xEE);  // tiles 0|4, 1|5
      const __m256 e2 = _mm256_shuffle_ps(b, d, 0x44), e3 = _mm256_shuffle_ps(b, d, 0xEE);  // tiles 2|6, 3|7
      const __m256 out[4] = {_mm256_permute2f128_ps(e0, e1, 0x20), _mm256_permute2f128_ps(e2, e3, 0x20),
                             _mm256_permute2f128_ps(e0, e1, 0x31), _mm256_permute2f128_ps(e2, e3, 0x31)};
      float* yrow = y + oy * g.ow + x0;
      const float* zrow = op.residual ? op.residual + oy * g.ow + x0 : nullptr;
      for (int k = 0; k < 4; ++k) {
        const int64_t left = n - 8 * k;
        if (left <= 0) break;
        __m256 r = out[k];
        if (left >= 8) {
          if (zrow) r = _mm256_add_ps(r, _mm256_loadu_ps(zrow + 8 * k));
          _mm256_storeu_ps(yrow + 8 * k, activate_avx2(r, *op.act));
        } else {
          const __m256i mk = lane_mask(static_cast<int>(left));
          if (zrow) r = _mm256_add_ps(r, _mm256_maskload_ps(zrow + 8 * k, mk));
          _mm256_maskstore_ps(yrow + 8 * k, mk, activate_avx2(r, *op.act));
        }
      }
    }
  }
}

// The F(4x4) transforms of this file for conv_winograd_driver.h.
struct Avx2Transforms {
  static constexpr int kVec = 8;
  static const GemmBackend& backend() { return gemm_backend_avx2(); }
  static void input_tile_row(const ConvGeometry2d& g, const Grid4& grid, const float* x, int64_t ty, int64_t tx0,
                             int64_t tx1, float* q, float* v, int64_t v_stride) {
    x86::input_tile_row(g, grid, x, ty, tx0, tx1, q, v, v_stride);
  }
  static void output_tile_row(const ConvGeometry2d& g, const float* m, int64_t m_stride, int64_t ty, int64_t tx0,
                              int64_t tx1, const Winograd4Output& op, float* y) {
    x86::output_tile_row(g, m, m_stride, ty, tx0, tx1, op, y);
  }
};

}  // namespace

size_t winograd4_scratch_floats_avx2(const ConvGeometry2d& g, int64_t batch, int threads, int64_t cin, int64_t cout) {
  return winograd4_scratch_floats<Avx2Transforms>(g, batch, threads, cin, cout);
}

void winograd4_run_avx2(const PackedMatrix* u, int64_t cin, int64_t cout, const ConvGeometry2d& g, int64_t batch,
                        const float* x, const float* bias, const float* residual, const GemmEpilogue& act, float* y,
                        ThreadPool* pool, float* scratch) {
  winograd4_run<Avx2Transforms>(u, cin, cout, g, batch, x, bias, residual, act, y, pool, scratch);
}

}  // namespace ignis::kernels::x86
