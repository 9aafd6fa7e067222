// SPDX-License-Identifier: Apache-2.0
// Dense and grouped windows on blocked input, AVX-512 (blocked_direct_avx512, conv_blocked.h):
// the AVX2 direct kernel's scheme (conv_blocked_avx2.cc) on the pointwise tile's shape.
//
// The input is a zero-padded copy (blocked_pad_planes), so every output position's window
// lies inside it and every row runs in tiles: 12 output positions x a pair of output blocks
// (24 accumulators), the c / group * kh * kw taps as its depth, each tap two weight vectors
// (the pair's 32 channels, packed as blocked_plain_pack packs them) and a broadcast of the
// input value under each position. Row ends take tiles of 4, then of 1, positions.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/conv_blocked_tile_avx512.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

using DirectRow = BlockedWindowRow;  // one output row's taps (conv_blocked.h)

// P positions from ox of output blocks `block` (and block + 1 when NB is 2); S = the column
// stride of the padded input in floats (0: r.col, read at run time).
template <int P, int NB, int S, Activation A>
void direct_tile(const DirectRow& r, int64_t ox, int64_t block, const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const int64_t s = S != 0 ? S : r.col;
  const float* w = a.w + block / 2 * r.w_pair + block % 2 * kB;
  const float* x = r.x + ox * s;
  __m512 acc[P][NB];
  for (int b = 0; b < NB; ++b) {
    const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + (block + b) * kB) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) acc[p][b] = bias;
  }
  for (int64_t t = 0; t < r.taps; ++t) {
    const float* xt = x + r.x_off[t];
    const float* wt = w + r.w_row[t] * kPairFloats;
    __m512 wv[NB];
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wt + b * kB);
    for (int p = 0; p < P; ++p) {
      const __m512 xv = _mm512_set1_ps(xt[p * s]);
      for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
    }
  }
  const int64_t plane = g.oh * g.ow * kB, blocks = channel_blocks(a.m);
  for (int b = 0; b < NB; ++b) {
    const int64_t off = (r.image * blocks + block + b) * plane + (r.oy * g.ow + ox) * kB;
    for (int p = 0; p < P; ++p)
      store_out<A>(acc[p][b], a.residual ? a.residual + off + p * kB : nullptr, a.y + off + p * kB,
                   block_mask(block + b, a.m), k);
  }
}

// Every position of one row for output blocks `block` (and block + 1 when NB is 2).
template <int NB, int S, Activation A>
void direct_row(const DirectRow& r, int64_t block, const ActivationParams512& k) {
  const int64_t ow = r.g->ow;
  int64_t ox = 0;
  for (; ox + kTileP <= ow; ox += kTileP) direct_tile<kTileP, NB, S, A>(r, ox, block, k);
  for (; ox + 4 <= ow; ox += 4) direct_tile<4, NB, S, A>(r, ox, block, k);
  for (; ox < ow; ++ox) direct_tile<1, NB, S, A>(r, ox, block, k);
}

// Output blocks [b0, b1) of one row: pairs where a pair's packed weights both lie in the range
// (packing is per pair from block 0), else single blocks.
template <int S, Activation A>
void direct_blocks(const DirectRow& r, int64_t b0, int64_t b1, const ActivationParams512& k) {
  for (int64_t block = b0; block < b1;) {
    if (block % 2 == 0 && block + 1 < b1) {
      direct_row<2, S, A>(r, block, k);
      block += 2;
    } else {
      direct_row<1, S, A>(r, block, k);
      ++block;
    }
  }
}

template <Activation A>
void direct_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  blocked_direct_walk(g, a, r0, r1,
                      [&]<int S>(const DirectRow& r, int64_t b0, int64_t b1) { direct_blocks<S, A>(r, b0, b1, k); });
}

}  // namespace

void blocked_direct_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { direct_rows<A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
