// SPDX-License-Identifier: Apache-2.0
// The AVX-512 direct kernel's tiles on blocked input (conv_blocked_direct_avx512.cc has the
// scheme), shared by the float32 kernel and the bfloat16 one (conv_blocked_avx512bf16.cc):
// both walk the same taps over a padded input and the same packed-weight rows of 32 slots,
// and differ only in what a slot holds and how a broadcast input meets a weight vector,
// which a math policy says:
//   kLanes      input slots per position (16 floats, or 8 pairs of bfloat16 channels);
//   Slot        the input slot's type;
//   broadcast(x)    the slot at x in every lane;
//   mac(acc, x, w)  acc + x * w over the slots (one FMA, or vdpbf16ps summing a pair).
// Internal linkage (see gemm_blocked.h): files built with different ISA flags include it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/conv_blocked_tile_avx512.h"

namespace ignis::kernels::x86 {

namespace {

using DirectRow = BlockedWindowRow;  // one output row's taps (conv_blocked.h)

// The input of a row: r.x as the policy's slots.
template <class M>
inline const typename M::Slot* row_input(const DirectRow& r) {
  return reinterpret_cast<const typename M::Slot*>(r.x);
}

// P positions from ox of output blocks `block` (and block + 1 when NB is 2); S = the column
// stride of the padded input in slots (0: r.col, read at run time).
template <class M, int P, int NB, int S, Activation A>
void direct_tile(const DirectRow& r, int64_t ox, int64_t block, const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const int64_t s = S != 0 ? S : r.col;
  const float* w = a.w + block / 2 * r.w_pair + block % 2 * kB;
  const typename M::Slot* x = row_input<M>(r) + ox * s;
  __m512 acc[P][NB];
  for (int b = 0; b < NB; ++b) {
    const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + (block + b) * kB) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) acc[p][b] = bias;
  }
  for (int64_t t = 0; t < r.taps; ++t) {
    const typename M::Slot* xt = x + r.x_off[t];
    const float* wt = w + r.w_row[t] * kPairFloats;
    __m512 wv[NB];
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wt + b * kB);
    for (int p = 0; p < P; ++p) {
      const __m512 xv = M::broadcast(xt + p * s);
      for (int b = 0; b < NB; ++b) acc[p][b] = M::mac(acc[p][b], xv, wv[b]);
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

// P positions from ox of output blocks `block` (and block + 1 when NB is 2), column stride SX,
// kw = 3: the sums (bias included) into out[p * NB + b]. Taps come in threes (the walk orders
// them channel, ky, kx), each three at consecutive input columns and packed-weight rows.
// Input column i of the tile lies under output o for tap kx where i = o * SX + kx.
template <class M, int P, int NB, int SX>
void window_sums_w3(const DirectRow& r, int64_t ox, int64_t block, __m512* out) {
  const BlockedConvArgs& a = *r.a;
  const float* w = a.w + block / 2 * r.w_pair + block % 2 * kB;
  const typename M::Slot* x = row_input<M>(r) + ox * SX * M::kLanes;
  __m512 acc[P][NB];
  for (int b = 0; b < NB; ++b) {
    const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + (block + b) * kB) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) acc[p][b] = bias;
  }
  for (int64_t t = 0; t < r.taps; t += 3) {
    const typename M::Slot* xt = x + r.x_off[t];
    const float* wt = w + r.w_row[t] * kPairFloats;
    __m512 wv[3][NB];
    for (int kx = 0; kx < 3; ++kx)
      for (int b = 0; b < NB; ++b) wv[kx][b] = _mm512_loadu_ps(wt + kx * kPairFloats + b * kB);
#pragma GCC unroll 25
    for (int i = 0; i < (P - 1) * SX + 3; ++i) {
      const __m512 xv = M::broadcast(xt + i * M::kLanes);
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; ++kx) {
        const int o = (i - kx) / SX;
        if (i - kx >= 0 && (i - kx) % SX == 0 && o < P)
          for (int b = 0; b < NB; ++b) acc[o][b] = M::mac(acc[o][b], xv, wv[kx][b]);
      }
    }
  }
  for (int p = 0; p < P; ++p)
    for (int b = 0; b < NB; ++b) out[p * NB + b] = acc[p][b];
}

// The widest tile per NB within the 32 vector registers: P * NB accumulators, 3 * NB weights
// and the broadcast.
template <int NB>
constexpr int kW3TileP = NB == 1 ? kTileP : 8;

template <class M, int NB, int SX>
void window_sums_w3_of(int p, const DirectRow& r, int64_t ox, int64_t block, __m512* out) {
  switch (p) {
    case 1: return window_sums_w3<M, 1, NB, SX>(r, ox, block, out);
    case 2: return window_sums_w3<M, 2, NB, SX>(r, ox, block, out);
    case 3: return window_sums_w3<M, 3, NB, SX>(r, ox, block, out);
    case 4: return window_sums_w3<M, 4, NB, SX>(r, ox, block, out);
    case 5: return window_sums_w3<M, 5, NB, SX>(r, ox, block, out);
    case 6: return window_sums_w3<M, 6, NB, SX>(r, ox, block, out);
    case 7: return window_sums_w3<M, 7, NB, SX>(r, ox, block, out);
    default: break;
  }
  if constexpr (NB == 1) {
    switch (p) {
      case 8: return window_sums_w3<M, 8, NB, SX>(r, ox, block, out);
      case 9: return window_sums_w3<M, 9, NB, SX>(r, ox, block, out);
      case 10: return window_sums_w3<M, 10, NB, SX>(r, ox, block, out);
      case 11: return window_sums_w3<M, 11, NB, SX>(r, ox, block, out);
      default: break;
    }
  }
  window_sums_w3<M, kW3TileP<NB>, NB, SX>(r, ox, block, out);
}

// Every position of one row for output blocks `block` (and block + 1 when NB is 2),
// input-stationary (conv_blocked_direct_avx512.cc).
template <class M, int NB, int SX, Activation A>
void window_row_w3(const DirectRow& r, int64_t block, const ActivationParams512& k) {
  constexpr int kP = kW3TileP<NB>;
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const int64_t plane = g.oh * g.ow * kB;
  __m512 sums[kP * NB];
  for (int64_t ox = 0; ox < g.ow; ox += kP) {
    const int p = static_cast<int>(std::min<int64_t>(kP, g.ow - ox));
    window_sums_w3_of<M, NB, SX>(p, r, ox, block, sums);
    for (int b = 0; b < NB; ++b) {
      const int64_t row = (r.image * channel_blocks(a.m) + block + b) * plane + (r.oy * g.ow + ox) * kB;
      const __mmask16 real = block_mask(block + b, a.m);
      for (int i = 0; i < p; ++i) {
        const int64_t off = row + i * kB;
        store_out<A>(sums[i * NB + b], a.residual ? a.residual + off : nullptr, a.y + off, real, k);
      }
    }
  }
}

// Every position of one row for output blocks `block` (and block + 1 when NB is 2).
template <class M, int NB, int S, Activation A>
void direct_row(const DirectRow& r, int64_t block, const ActivationParams512& k) {
  const int64_t ow = r.g->ow;
  int64_t ox = 0;
  for (; ox + kTileP <= ow; ox += kTileP) direct_tile<M, kTileP, NB, S, A>(r, ox, block, k);
  for (; ox + 4 <= ow; ox += 4) direct_tile<M, 4, NB, S, A>(r, ox, block, k);
  for (; ox < ow; ++ox) direct_tile<M, 1, NB, S, A>(r, ox, block, k);
}

// Output blocks [b0, b1) of one row: pairs where a pair's packed weights both lie in the range
// (packing is per pair from block 0), else single blocks.
template <class M, int S, Activation A>
void direct_blocks(const DirectRow& r, int64_t b0, int64_t b1, const ActivationParams512& k) {
  for (int64_t block = b0; block < b1;) {
    const bool pair = block % 2 == 0 && block + 1 < b1;
    if (r.a->window_rows && (S == M::kLanes || S == 2 * M::kLanes) && r.g->kw == 3) {
      constexpr int kSx = S == 2 * M::kLanes ? 2 : 1;
      if (pair) window_row_w3<M, 2, kSx, A>(r, block, k);
      else window_row_w3<M, 1, kSx, A>(r, block, k);
      block += pair ? 2 : 1;
    } else if (pair) {
      direct_row<M, 2, S, A>(r, block, k);
      block += 2;
    } else {
      direct_row<M, 1, S, A>(r, block, k);
      ++block;
    }
  }
}

// Output rows [r0, r1) of the direct convolution (blocked_direct_walk) in policy M.
template <class M, Activation A>
void direct_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  blocked_direct_walk<M::kLanes>(
      g, a, r0, r1, [&]<int S>(const DirectRow& r, int64_t b0, int64_t b1) { direct_blocks<M, S, A>(r, b0, b1, k); });
}

}  // namespace

}  // namespace ignis::kernels::x86
