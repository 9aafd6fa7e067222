// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3) convolution with AVX-512 transforms and the 8x32 sgemm.
//
// Each 4x4 output tile is computed from a 6x6 input tile d as A^T [(G g G^T) . (B^T d B)] A,
// where . is the elementwise product over the 36 transform points; summed over input
// channels, each point is one GEMM U_k [cout x cin] x V_k [cin x tiles]. That is 36 multiply-
// adds per 16 outputs and channel pair instead of 144: 4x fewer FLOPs (3x on images whose
// size is not a multiple of 4, since edge tiles are computed whole).
//
// Precision: F(4x4) uses the points 0, +-1, +-2 and infinity; its transforms scale values by
// up to ~10 on the way in and up to 8 (A^T) on the way out, so rounding grows. Measured on
// ResNet-like data (28x28, padding 1, N(0, 1) inputs, He-scaled weights; the unit test
// tests/kernels/x86/conv_winograd_test.cc): max |winograd - direct| / max |direct| of
// 7.3e-6 at cin 64, 1.1e-5 at cin 256 and 9.1e-6 at cin 512, absolute errors 4-6e-5 on
// outputs up to 5.7. End to end, resnet50 against onnxruntime: max_abs 6.9e-5, max_rel
// 4.6e-4, 44% of the parity tolerance of tests/models/test_parity.py, |a-b| <= 1e-4 +
// 1e-3|b| (21% without Winograd). That is inside the tolerance, so F(4x4) rather than F(2x2, 3x3), which would be
// more exact but save only 2.25x of the FLOPs instead of 4x.
//
// Speed (single thread, CPU time, loaded machine; im2col 8x32 GEMM -> Winograd):
//   64ch 56x56 2.24 -> 0.87 ms, 128ch 28x28 1.93 -> 0.78 ms, 256ch 14x14 1.90 -> 1.38 ms,
//   512ch 14x14 7.5 -> 5.8 ms, 16ch 56x56 0.24 -> 0.12 ms, 64ch 12x12 0.14 -> 0.11 ms;
//   but 256ch 10x10 1.14 -> 1.23 ms, 256ch 7x7 0.61 -> 1.10 ms, 64ch 8x8 0.07 -> 0.09 ms.
// Hence the limits in conv_winograd.h.
//
// The run around the transforms (tile blocks, threads, the 36 GEMMs) is conv_winograd_driver.h's.
// Transforms are vectorized across 16 horizontally adjacent tiles of one tile row. The input
// rows a tile row reads are split into 4 phases (columns 4j + p), so that tap column c of tile
// j is phase c % 4 at index j + c / 4: contiguous loads for 16 tiles at a time. The output
// transform merges its 4 column vectors back into 64 contiguous output floats.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <vector>

#include "kernels/x86/conv_winograd.h"
#include "kernels/x86/winograd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

// Input transform of the tiles [tx0, tx1) of tile row ty of one channel plane `x`:
// V_k[col + (tx - tx0)] for the 36 points k, V_k = v + k * v_stride.
void input_tile_row(const ConvGeometry2d& g, const Grid4& grid, const float* x, int64_t ty, int64_t tx0,
                    int64_t tx1, float* q, float* v, int64_t v_stride) {
  // Phase p of index j is padded column 4j + p (input column 4j + p - pw). Lane j of the
  // deinterleaving permutes picks element 4j + p of a pair of vectors (32 floats).
  const __m512i phase_idx[4] = {
      _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 0, 0, 0, 0, 0, 0, 0),
      _mm512_setr_epi32(1, 5, 9, 13, 17, 21, 25, 29, 0, 0, 0, 0, 0, 0, 0, 0),
      _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0),
      _mm512_setr_epi32(3, 7, 11, 15, 19, 23, 27, 31, 0, 0, 0, 0, 0, 0, 0, 0)};
  const float* rows[6];
  for (int r = 0; r < 6; ++r) {
    const int64_t iy = 4 * ty - g.ph + r;
    rows[r] = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
  }
  // 1. Vertical transform of the 6 input rows, deinterleaved into phases, for phase indices
  //    [16 * q0, 16 * (q1 + 1)): q[(u * 4 + p) * qlen + j].
  const int64_t q0 = tx0 / 16, q1 = tx1 / 16;
  for (int64_t qc = q0; qc <= q1; ++qc) {
    __m512 d[4][6];  // [phase][input row]
    for (int r = 0; r < 6; ++r) {
      const int64_t s = 64 * qc - g.pw;
      const __m512 a0 = load_padded(rows[r], s, g.iw), a1 = load_padded(rows[r], s + 16, g.iw);
      const __m512 a2 = load_padded(rows[r], s + 32, g.iw), a3 = load_padded(rows[r], s + 48, g.iw);
      for (int p = 0; p < 4; ++p) {
        const __m512 lo = _mm512_permutex2var_ps(a0, phase_idx[p], a1);
        const __m512 hi = _mm512_permutex2var_ps(a2, phase_idx[p], a3);
        // (The masked forms, with all lanes, sidestep GCC 12's maybe-uninitialized false positive
        // on the unmasked intrinsics' undefined pass-through operand.)
        d[p][r] = _mm512_mask_shuffle_f32x4(lo, 0xFFFF, lo, hi, 0x44);
      }
    }
    for (int p = 0; p < 4; ++p) {
      __m512 t[6];
      input4_1d(d[p], t);
      for (int u = 0; u < 6; ++u) _mm512_store_ps(q + (u * 4 + p) * grid.qlen + 16 * qc, t[u]);
    }
  }
  // 2. Horizontal transform, 16 tiles at a time: tap column c of tile j is phase c % 4 at
  //    index j + c / 4.
  for (int64_t tx = tx0; tx < tx1; tx += 16) {
    const __mmask16 m = lanes(0, tx1 - tx);
    float* vt = v + (tx - tx0);
    for (int u = 0; u < 6; ++u) {
      // Masked loads: lanes past tx1 would read phase indices step 1 never wrote.
      const float* qu = q + u * 4 * grid.qlen + tx;
      const __m512 d[6] = {_mm512_maskz_loadu_ps(m, qu),
                           _mm512_maskz_loadu_ps(m, qu + grid.qlen),
                           _mm512_maskz_loadu_ps(m, qu + 2 * grid.qlen),
                           _mm512_maskz_loadu_ps(m, qu + 3 * grid.qlen),
                           _mm512_maskz_loadu_ps(m, qu + 1),
                           _mm512_maskz_loadu_ps(m, qu + grid.qlen + 1)};
      __m512 t[6];
      input4_1d(d, t);
      for (int w = 0; w < 6; ++w) _mm512_mask_storeu_ps(vt + (u * 6 + w) * v_stride, m, t[w]);
    }
  }
}

// Output transform of tiles [tx0, tx1) of tile row ty, one output channel plane y; M_k of the
// first tile at m + k * m_stride.
void output_tile_row(const ConvGeometry2d& g, const float* m, int64_t m_stride, int64_t ty, int64_t tx0, int64_t tx1,
                     const Winograd4Output& op, float* y) {
  // Lane pairs (y0[l], y1[l]) for l < 8 and l >= 8, then groups of four tiles' 4 columns.
  const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512i quad_lo = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23);
  const __m512i quad_hi = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
  const __m512 bias = _mm512_set1_ps(op.bias), zero = _mm512_setzero_ps();
  const bool relu = op.act->act == Activation::Relu;
  const bool other_act = op.act->act != Activation::None && !relu;
  GemmEpilogue act_only;
  act_only.act = op.act->act;
  act_only.act_lo = op.act->act_lo;
  act_only.act_hi = op.act->act_hi;
  act_only.act_alpha = op.act->act_alpha;
  act_only.act_beta = op.act->act_beta;
  for (int64_t tx = tx0; tx < tx1; tx += 16) {
    const float* mt = m + (tx - tx0);
    // Masked loads: columns past the block's last tile were never written by the GEMM.
    const __mmask16 tiles = lanes(0, tx1 - tx);
    // Columns first: w[i][v] = sum_u A^T[i][u] M[u][v].
    __m512 w[4][6];
    for (int v = 0; v < 6; ++v) {
      __m512 col[6], o[4];
      for (int u = 0; u < 6; ++u) col[u] = _mm512_maskz_loadu_ps(tiles, mt + (u * 6 + v) * m_stride);
      output4_1d(col, o);
      for (int i = 0; i < 4; ++i) w[i][v] = o[i];
    }
    const int64_t x0 = 4 * tx, n = std::min<int64_t>(4 * std::min<int64_t>(16, tx1 - tx), g.ow - x0);
    for (int i = 0; i < 4; ++i) {
      const int64_t oy = 4 * ty + i;
      if (oy >= g.oh) break;
      __m512 o[4];
      output4_1d(w[i], o);
      for (int j = 0; j < 4; ++j) o[j] = _mm512_add_ps(o[j], bias);
      const __m512 a = _mm512_permutex2var_ps(o[0], pair_lo, o[1]), b = _mm512_permutex2var_ps(o[0], pair_hi, o[1]);
      const __m512 c = _mm512_permutex2var_ps(o[2], pair_lo, o[3]), d = _mm512_permutex2var_ps(o[2], pair_hi, o[3]);
      __m512 out[4] = {_mm512_permutex2var_ps(a, quad_lo, c), _mm512_permutex2var_ps(a, quad_hi, c),
                       _mm512_permutex2var_ps(b, quad_lo, d), _mm512_permutex2var_ps(b, quad_hi, d)};
      float* yrow = y + oy * g.ow + x0;
      const float* zrow = op.residual ? op.residual + oy * g.ow + x0 : nullptr;
      for (int k = 0; k < 4; ++k) {
        const __mmask16 mk = lanes(0, n - 16 * k);
        if (!mk) break;
        __m512 r = out[k];
        if (zrow) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(mk, zrow + 16 * k));
        if (relu) r = _mm512_mask_max_ps(r, 0xFFFF, zero, r);
        _mm512_mask_storeu_ps(yrow + 16 * k, mk, r);
      }
      if (other_act) gemm_f32_apply_epilogue(act_only, 0, 0, n, yrow);
    }
  }
}

// The F(4x4) transforms of this file for conv_winograd_driver.h.
struct Avx512Transforms {
  static constexpr int kVec = 16;
  static const GemmBackend& backend() { return gemm_backend_avx512(); }
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

size_t winograd4_scratch_floats_avx512(const ConvGeometry2d& g, int64_t batch, int threads, int64_t cin,
                                       int64_t cout) {
  return winograd4_scratch_floats<Avx512Transforms>(g, batch, threads, cin, cout);
}

void winograd4_run_avx512(const PackedMatrix* u, int64_t cin, int64_t cout, const ConvGeometry2d& g, int64_t batch,
                          const float* x, const float* bias, const float* residual, const GemmEpilogue& act, float* y,
                          ThreadPool* pool, float* scratch) {
  winograd4_run<Avx512Transforms>(u, cin, cout, g, batch, x, bias, residual, act, y, pool, scratch);
}

}  // namespace ignis::kernels::x86
