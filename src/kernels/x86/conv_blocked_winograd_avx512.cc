// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3) on the blocked channel layout with AVX-512 transforms and the 8x32 sgemm
// (conv_blocked.h has the stages and the contract; conv_winograd_f4x4_avx512.cc the same
// arithmetic on NCHW planes, and its precision figures).
//
// Each transform works on 16 channels of one tile at a time: the 6x6 input window is 36
// vector loads (zero outside the plane), transformed by columns then rows into the 36
// points, each stored as 16 floats of that point's V_k row. So V_k [tiles x c_pad] is a plain
// row-major A operand and the weights U_k^T the packed B: the GEMM's 8 rows are tiles and its
// 32 columns output channels. The output transform reads 16 output channels of the 36 points
// of one tile and writes its 4x4 positions as whole vectors, with bias, residual and
// activation on the way.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/conv_blocked_tile_avx512.h"
#include "kernels/x86/winograd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kPoints = 36;

// Tile t's image and tile coordinates.
struct TilePos {
  int64_t image, ty, tx;
};

inline TilePos tile_pos(int64_t t, int64_t tw, int64_t per_image) {
  const int64_t r = t % per_image;
  return {t / per_image, r / tw, r % tw};
}

// Bits 0..5: which of the 6 rows (columns) from `first` lie inside [0, size).
inline unsigned inside_bits(int64_t first, int64_t size) {
  unsigned bits = 0;
  for (int i = 0; i < 6; ++i)
    if (first + i >= 0 && first + i < size) bits |= 1u << i;
  return bits;
}

// The 36 points of input block `plane` (ih x iw positions of 16 floats) under tile pos:
// V_k row `row` at v + k * v_stride.
void input_tile(const ConvGeometry2d& g, const float* plane, const TilePos& p, float* v, int64_t v_stride) {
  const int64_t iy0 = 4 * p.ty - g.ph, ix0 = 4 * p.tx - g.pw;
  const unsigned rows = inside_bits(iy0, g.ih), cols = inside_bits(ix0, g.iw);
  __m512 t[6][6];  // [point row u][window column]
  for (int c = 0; c < 6; ++c) {
    __m512 d[6], o[6];
    for (int r = 0; r < 6; ++r)
      d[r] = (rows >> r) & (cols >> c) & 1u ? _mm512_loadu_ps(plane + ((iy0 + r) * g.iw + ix0 + c) * kB)
                                             : _mm512_setzero_ps();
    input4_1d(d, o);
    for (int u = 0; u < 6; ++u) t[u][c] = o[u];
  }
  for (int u = 0; u < 6; ++u) {
    __m512 o[6];
    input4_1d(t[u], o);
    for (int w = 0; w < 6; ++w) _mm512_storeu_ps(v + (u * 6 + w) * v_stride, o[w]);
  }
}

// Output block `block` of tile pos from its 36 points (M_k at m + k * m_stride): y and
// residual are that block's planes (oh x ow positions of 16 floats).
template <Activation A>
void output_tile(const ConvGeometry2d& g, const float* m, int64_t m_stride, const TilePos& p, __m512 bias,
                 __mmask16 real, const float* residual, float* y, const ActivationParams512& k) {
  __m512 w[4][6];  // [output row i][point column v]
  for (int v = 0; v < 6; ++v) {
    __m512 col[6], o[4];
    for (int u = 0; u < 6; ++u) col[u] = _mm512_loadu_ps(m + (u * 6 + v) * m_stride);
    output4_1d(col, o);
    for (int i = 0; i < 4; ++i) w[i][v] = o[i];
  }
  const int64_t rows = std::min<int64_t>(4, g.oh - 4 * p.ty), cols = std::min<int64_t>(4, g.ow - 4 * p.tx);
  for (int64_t i = 0; i < rows; ++i) {
    __m512 o[4];
    output4_1d(w[i], o);
    const int64_t at = ((4 * p.ty + i) * g.ow + 4 * p.tx) * kB;
    for (int64_t j = 0; j < cols; ++j)
      store_out<A>(_mm512_add_ps(o[j], bias), residual ? residual + at + j * kB : nullptr, y + at + j * kB, real, k);
  }
}

template <Activation A>
void winograd_tiles(const ConvGeometry2d& g, const BlockedConvArgs& a, const PackedMatrix* u, int64_t t0, int64_t t1,
                    float* scratch) {
  const ActivationParams512 k(*a.act);
  const int64_t cb = channel_blocks(a.c), mb = channel_blocks(a.m);
  const int64_t cpad = cb * kB, mpad = mb * kB;
  const int64_t tw = (g.ow + 3) / 4, per_image = blocked_winograd4_tiles(g);
  const int64_t in_plane = g.ih * g.iw * kB, out_plane = g.oh * g.ow * kB;
  const int64_t nb = std::min(blocked_winograd4_block_tiles(a.c, a.m), t1 - t0);
  const int64_t v_stride = nb * cpad, m_stride = nb * mpad;
  float* v = scratch;
  float* m = v + kPoints * v_stride;
  float* gemm_ws = m + kPoints * m_stride;
  GemmArgs gemm;
  gemm.backend = &gemm_backend_avx512();
  gemm.n = mpad;
  gemm.k = cpad;
  gemm.ldc = mpad;
  // Blocks of equal size (at most nb tiles).
  const int64_t blocks = (t1 - t0 + nb - 1) / nb;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t b0 = t0 + (t1 - t0) * b / blocks, b1 = t0 + (t1 - t0) * (b + 1) / blocks;
    for (int64_t t = b0; t < b1; ++t) {
      const TilePos p = tile_pos(t, tw, per_image);
      for (int64_t c = 0; c < cb; ++c)
        input_tile(g, a.x + (p.image * cb + c) * in_plane, p, v + (t - b0) * cpad + c * kB, v_stride);
    }
    gemm.m = b1 - b0;
    for (int point = 0; point < kPoints; ++point) {
      gemm.a = {.data = v + point * v_stride, .ld = cpad};
      gemm.b = {.packed = &u[point]};
      gemm.c = m + point * m_stride;
      gemm_f32_range(gemm, 0, b1 - b0, 0, mpad, gemm_ws);
    }
    for (int64_t t = b0; t < b1; ++t) {
      const TilePos p = tile_pos(t, tw, per_image);
      for (int64_t o = 0; o < mb; ++o) {
        const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + o * kB) : _mm512_setzero_ps();
        const int64_t plane = (p.image * mb + o) * out_plane;
        output_tile<A>(g, m + (t - b0) * mpad + o * kB, m_stride, p, bias, block_mask(o, a.m),
                       a.residual ? a.residual + plane : nullptr, a.y + plane, k);
      }
    }
  }
}

}  // namespace

void blocked_winograd4_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, const PackedMatrix* u, int64_t t0,
                              int64_t t1, float* scratch) {
  if (t0 >= t1) return;
  with_activation(a.act->act, [&]<Activation A>() { winograd_tiles<A>(g, a, u, t0, t1, scratch); });
}

}  // namespace ignis::kernels::x86
