// SPDX-License-Identifier: Apache-2.0
// Winograd F(2x2, 3x3) convolution with AVX-512 transforms and the 8x32 sgemm, for the
// outputs too small for F(4x4) (conv_winograd.h).
//
// Each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A from a 4x4 input tile d (stride 2);
// summed over input channels, each of the 16 transform points is one GEMM
// U_k [cout x cin] x V_k [cin x tiles]: 16 multiply-adds per 4 outputs and channel pair
// instead of 36. The transforms only add and subtract (G halves), so rounding stays close to
// the direct sum's.
//
// One run works on blocks of tiles (all images' tiles numbered row-major); every stage of a
// block is split over the threads: input channels (input transform), the 16 GEMMs, output
// channels (output transform with bias, residual and activation). Splitting the GEMMs by
// point rather than tiles by thread has each thread stream only its share of the
// transformed weights, which for a 14x14 image (49 tiles) are read once per block.
// Transforms are vectorized across the tiles of one tile row: the 4 input rows a tile row
// reads are loaded 32 columns at a time and each of the 4 tap columns of 15 tiles is one
// two-source permute (tap c of tile j is padded column 2j + c).
//
// Measured (kernel benchmark, AVX-512, 1 / 2 threads; im2col GEMM in the transposed form ->
// F(2x2)): 256 -> 256 channels on 14x14 1.77 -> 1.11 / 1.04 -> 0.58 ms, 512 -> 512 on 14x14
// 6.64 -> 3.97 / 3.55 -> 1.98 ms, 64 -> 64 on 10x10 (25 tiles) 0.088 -> 0.067 / 0.053 ->
// 0.042 ms. In resnet50 (2 threads, weights cold) the 14x14 stage's 3x3 convolutions went
// from 1.09 to 0.77 ms each.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_winograd.h"
#include "kernels/x86/winograd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kPoints2 = 16;  // 4x4 transform points

inline int64_t round_up16(int64_t v) { return (v + 15) / 16 * 16; }

struct Grid2 {
  int64_t th = 0, tw = 0;  // tile rows and columns per image
  int64_t per_image = 0;
};

Grid2 make_grid2(const ConvGeometry2d& g) {
  Grid2 t;
  t.th = (g.oh + 1) / 2;
  t.tw = (g.ow + 1) / 2;
  t.per_image = t.th * t.tw;
  return t;
}

// B^T of F(2x2, 3x3) on one 4-vector: (d0 - d2, d1 + d2, d2 - d1, d1 - d3).
inline void input_1d(const __m512 d[4], __m512 t[4]) {
  t[0] = _mm512_sub_ps(d[0], d[2]);
  t[1] = _mm512_add_ps(d[1], d[2]);
  t[2] = _mm512_sub_ps(d[2], d[1]);
  t[3] = _mm512_sub_ps(d[1], d[3]);
}

// Input transform of tiles [tx0, tx1) of tile row ty of one channel plane x:
// V_k[tx - tx0] for the 16 points k, V_k = v + k * v_stride.
void input_tile_row(const ConvGeometry2d& g, const float* x, int64_t ty, int64_t tx0, int64_t tx1, float* v,
                    int64_t v_stride) {
  // Lane j of tap c: element 2j + c of a pair of vectors (32 padded columns), 15 tiles a time.
  constexpr int64_t kTiles = 15;
  const __m512i tap_idx[4] = {
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30),
      _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31),
      _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 31),
      _mm512_setr_epi32(3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 31)};
  const float* rows[4];
  for (int r = 0; r < 4; ++r) {
    const int64_t iy = 2 * ty - g.ph + r;
    rows[r] = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
  }
  for (int64_t tx = tx0; tx < tx1; tx += kTiles) {
    const __mmask16 m = lanes(0, std::min(kTiles, tx1 - tx));
    const int64_t s = 2 * tx - g.pw;
    // d[c][r]: tap column c of input row r, one lane per tile.
    __m512 d[4][4];
    for (int r = 0; r < 4; ++r) {
      const __m512 a0 = load_padded(rows[r], s, g.iw), a1 = load_padded(rows[r], s + 16, g.iw);
      for (int c = 0; c < 4; ++c) d[c][r] = _mm512_permutex2var_ps(a0, tap_idx[c], a1);
    }
    __m512 t[4][4];  // t[c][u]: the vertical transform of tap column c
    for (int c = 0; c < 4; ++c) input_1d(d[c], t[c]);
    float* vt = v + (tx - tx0);
    for (int u = 0; u < 4; ++u) {
      const __m512 row[4] = {t[0][u], t[1][u], t[2][u], t[3][u]};
      __m512 w[4];
      input_1d(row, w);
      for (int k = 0; k < 4; ++k) _mm512_mask_storeu_ps(vt + (u * 4 + k) * v_stride, m, w[k]);
    }
  }
}

// A^T of F(2x2, 3x3) on one 4-vector: (m0 + m1 + m2, m1 - m2 - m3).
inline void output_1d(__m512 m0, __m512 m1, __m512 m2, __m512 m3, __m512& o0, __m512& o1) {
  o0 = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
  o1 = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
}

// Output transform of tiles [tx0, tx1) of tile row ty into one output channel plane y, M_k
// of the first tile at m + k * m_stride; bias, residual (plane laid out like y, or null) and
// activation A applied before the one store of each output row piece.
template <Activation A>
void output_tile_row(const ConvGeometry2d& g, const float* m, int64_t m_stride, int64_t ty, int64_t tx0, int64_t tx1,
                     float bias, const float* residual, const ActivationParams512& act, float* y) {
  // Output columns 2j and 2j + 1 of tile lane j, interleaved: tiles 0-7 then 8-15.
  const __m512i pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512 b = _mm512_set1_ps(bias);
  for (int64_t tx = tx0; tx < tx1; tx += 16) {
    // Masked loads: columns past the block's last tile were never written by the GEMM.
    const __mmask16 tiles = lanes(0, tx1 - tx);
    const float* mt = m + (tx - tx0);
    __m512 r[2][4];  // r[i][c]: A^T over the rows of tap column c
    for (int c = 0; c < 4; ++c)
      output_1d(_mm512_maskz_loadu_ps(tiles, mt + (0 * 4 + c) * m_stride),
                _mm512_maskz_loadu_ps(tiles, mt + (1 * 4 + c) * m_stride),
                _mm512_maskz_loadu_ps(tiles, mt + (2 * 4 + c) * m_stride),
                _mm512_maskz_loadu_ps(tiles, mt + (3 * 4 + c) * m_stride), r[0][c], r[1][c]);
    const int64_t x0 = 2 * tx, n = std::min<int64_t>(2 * std::min<int64_t>(16, tx1 - tx), g.ow - x0);
    for (int i = 0; i < 2; ++i) {
      const int64_t oy = 2 * ty + i;
      if (oy >= g.oh) break;
      __m512 o0, o1;
      output_1d(r[i][0], r[i][1], r[i][2], r[i][3], o0, o1);
      const __m512 out[2] = {_mm512_permutex2var_ps(o0, pair_lo, o1), _mm512_permutex2var_ps(o0, pair_hi, o1)};
      float* yrow = y + oy * g.ow + x0;
      const float* zrow = residual ? residual + oy * g.ow + x0 : nullptr;
      for (int k = 0; k < 2; ++k) {
        const __mmask16 mk = lanes(0, n - 16 * k);
        if (!mk) break;
        __m512 v = _mm512_add_ps(out[k], b);
        if (zrow) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, zrow + 16 * k));
        _mm512_mask_storeu_ps(yrow + 16 * k, mk, activate_avx512<A>(v, act));
      }
    }
  }
}

// Tiles per block: V (16 x cin x nb) and M (16 x cout x nb) in about 2 MiB, at least 64 tiles
// (a 14x14 image's 49 in one block, so each transformed weight is read once per image).
int64_t block_tiles2(int64_t cin, int64_t cout) {
  const int64_t fit = (int64_t{2} << 20) / (kPoints2 * 4 * (cin + cout));
  return std::clamp<int64_t>(fit / 16 * 16, 64, 256);
}

GemmArgs gemm_shape2(int64_t cout, int64_t cin, int64_t nb) {
  GemmArgs a;
  a.backend = &gemm_backend_avx512();
  a.m = cout;
  a.n = nb;
  a.k = cin;
  return a;
}

struct Plan2 {
  int64_t nb = 0, nbp = 0;  // tiles per block, and the V / M row length
  size_t v = 0, m = 0, gemm = 0;
};

Plan2 make_plan2(const ConvGeometry2d& g, int64_t batch, int64_t cin, int64_t cout) {
  Plan2 p;
  p.nb = std::min(block_tiles2(cin, cout), batch * make_grid2(g).per_image);
  p.nbp = round_up16(p.nb);
  p.v = static_cast<size_t>(kPoints2 * cin * p.nbp);
  p.m = static_cast<size_t>(kPoints2 * cout * p.nbp);
  p.gemm = static_cast<size_t>(round_up16(static_cast<int64_t>(gemm_f32_thread_workspace(gemm_shape2(cout, cin, p.nb)))));
  return p;
}

}  // namespace

size_t ConvWinograd2::scratch_floats(const ConvGeometry2d& g, int64_t batch, int threads) const {
  const Plan2 p = make_plan2(g, batch, cin_, cout_);
  return p.v + p.m + p.gemm * static_cast<size_t>(std::max(threads, 1));
}

void ConvWinograd2::run(const ConvGeometry2d& g, int64_t batch, const float* x, const float* bias,
                        const float* residual, const GemmEpilogue& act, float* y, ThreadPool* pool,
                        float* scratch) const {
  const Grid2 grid = make_grid2(g);
  const int64_t total = batch * grid.per_image;
  const Plan2 plan = make_plan2(g, batch, cin_, cout_);
  const int threads = pool ? pool->threads() : 1;
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
  const int64_t v_stride = cin_ * plan.nbp, m_stride = cout_ * plan.nbp;
  float* v = scratch;
  float* m = v + plan.v;
  float* gemm_ws = m + plan.m;
  const ActivationParams512 params(act);
  for (int64_t t0 = 0; t0 < total; t0 += plan.nb) {
    const int64_t t1 = std::min(total, t0 + plan.nb);
    parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        for (int64_t c = cin_ * p / threads; c < cin_ * (p + 1) / threads; ++c)
          for_each_row_segment(grid, t0, t1, [&](int64_t n, int64_t ty, int64_t tx0, int64_t tx1, int64_t col) {
            input_tile_row(g, x + (n * cin_ + c) * in_plane, ty, tx0, tx1, v + c * plan.nbp + col, v_stride);
          });
    });
    parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        GemmArgs a = gemm_shape2(cout_, cin_, t1 - t0);
        a.ldc = plan.nbp;
        for (int64_t k = kPoints2 * p / threads; k < kPoints2 * (p + 1) / threads; ++k) {
          a.a.packed = &u_[static_cast<size_t>(k)];
          a.b = {.data = v + k * v_stride, .ld = plan.nbp};
          a.c = m + k * m_stride;
          gemm_f32_range(a, 0, cout_, 0, t1 - t0, gemm_ws + plan.gemm * static_cast<size_t>(p));
        }
      }
    });
    parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
      with_activation(act.act, [&]<Activation A>() {
        for (int64_t p = begin; p < end; ++p)
          for (int64_t o = cout_ * p / threads; o < cout_ * (p + 1) / threads; ++o)
            for_each_row_segment(grid, t0, t1, [&](int64_t n, int64_t ty, int64_t tx0, int64_t tx1, int64_t col) {
              output_tile_row<A>(g, m + o * plan.nbp + col, m_stride, ty, tx0, tx1, bias ? bias[o] : 0.0f,
                                 residual ? residual + (n * cout_ + o) * out_plane : nullptr, params,
                                 y + (n * cout_ + o) * out_plane);
            });
      });
    });
  }
}

}  // namespace ignis::kernels::x86
