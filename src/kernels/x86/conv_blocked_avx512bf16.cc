// SPDX-License-Identifier: Apache-2.0
// The blocked pointwise and direct convolutions in bfloat16 (conv_blocked.h), for sessions of
// precision bf16 on CPUs with AVX512_BF16 (nn_conv_blocked.cc runs them only there): the
// float32 kernels' tiles (conv_blocked_tile_avx512.h, conv_blocked_direct_tile_avx512.h) with
// vdpbf16ps summing two input channels per instruction.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/half.h"
#include "kernels/x86/conv_blocked_direct_tile_avx512.h"
#include "kernels/x86/conv_blocked_tile_avx512.h"

namespace ignis::kernels::x86 {

// ---- pointwise in bfloat16 ------------------------------------------------------------------

namespace {

constexpr int64_t kBlockPairs = kB / 2;  // pairs of input channels per block

// P positions x NB output blocks (of pair `pair`) from the tile's input as bfloat16 pairs
// (xp: [block][kTileP][kBlockPairs] 32-bit pairs) and the bfloat16 weights of the pair (w:
// [c / 2][32] pairs); y / residual at the tile's first position in the pair's first block.
template <int P, int NB, Activation A>
void pointwise_tile_bf16(const BlockedConvArgs& a, int64_t xbs, const uint32_t* xp, const uint32_t* w, int64_t pair,
                         const float* residual, float* y, const ActivationParams512& k) {
  __m512 acc[P][NB];
  start_tile<P, NB>(a, pair, acc);
  const int64_t cb = channel_blocks(a.c);
  for (int64_t blk = 0; blk < cb; ++blk) {
    const uint32_t* xb = xp + blk * kTileP * kBlockPairs;
    const uint32_t* wb = w + blk * kBlockPairs * kPairFloats;
    for (int q = 0; q < kBlockPairs; ++q) {
      // Half the float32 kernel's weight bytes per depth step: the same distance in bytes.
      _mm_prefetch(reinterpret_cast<const char*>(wb + q * kPairFloats + kWeightPrefetch), _MM_HINT_T0);
      __m512bh wv[NB];
      for (int b = 0; b < NB; ++b) wv[b] = (__m512bh)_mm512_loadu_si512(wb + q * kPairFloats + b * kB);
      for (int p = 0; p < P; ++p) {
        const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(xb[p * kBlockPairs + q]));
        for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_dpbf16_ps(acc[p][b], xv, wv[b]);
      }
    }
  }
  finish_tile<P, NB, A>(a, xbs, pair, acc, residual, y, k);
}

using PointwiseBf16Tile = void (*)(const BlockedConvArgs&, int64_t, const uint32_t*, const uint32_t*, int64_t,
                                   const float*, float*, const ActivationParams512&);

template <int NB, Activation A, int... Ps>
constexpr std::array<PointwiseBf16Tile, sizeof...(Ps)> bf16_tiles(std::integer_sequence<int, Ps...>) {
  return {pointwise_tile_bf16<Ps + 1, NB, A>...};
}

template <Activation A>
void pointwise_range_bf16(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0, int64_t j1) {
  // Tiles of 1..kTileP positions, for one and for two output blocks.
  static constexpr std::array<PointwiseBf16Tile, kTileP> kTiles[2] = {
      bf16_tiles<1, A>(std::make_integer_sequence<int, kTileP>()),
      bf16_tiles<2, A>(std::make_integer_sequence<int, kTileP>())};
  const ActivationParams512 k(*a.act);
  const int64_t xbs = positions * kB, cb = channel_blocks(a.c);
  const int64_t wpair = cb * kBlockPairs * kPairFloats;
  const int64_t out_blocks = channel_blocks(a.m);
  alignas(64) uint32_t xp[kBlockedPointwiseBf16MaxBlocks * kTileP * kBlockPairs];
  const auto* w = reinterpret_cast<const uint32_t*>(a.w);
  for (int64_t p = p0; p < p1; p += kTileP) {
    const int tp = static_cast<int>(std::min<int64_t>(kTileP, p1 - p));
    // The tile's input rounded to bfloat16 once, for every output pair: 16 channels of one
    // position become 8 pairs in one instruction (channel 2q in the low half of pair q).
    for (int64_t blk = 0; blk < cb; ++blk)
      for (int i = 0; i < tp; ++i)
        _mm256_store_si256(reinterpret_cast<__m256i*>(xp + (blk * kTileP + i) * kBlockPairs),
                           (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(a.x + blk * xbs + (p + i) * kB)));
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t yoff = 2 * j * xbs + p * kB;
      kTiles[2 * j + 1 < out_blocks][tp - 1](a, xbs, xp, w + j * wpair, j,
                                             a.residual ? a.residual + yoff : nullptr, a.y + yoff, k);
    }
  }
}

}  // namespace

void blocked_pointwise_avx512bf16(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                                  int64_t j1) {
  with_activation(a.act->act, [&]<Activation A>() { pointwise_range_bf16<A>(a, positions, p0, p1, j0, j1); });
}


size_t blocked_pointwise_bf16_packed_floats(int64_t m, int64_t c) { return blocked_pointwise_packed_floats(m, c) / 2; }

void blocked_pointwise_bf16_pack(const float* w, int64_t m, int64_t c, float* packed) {
  const int64_t cpad = channel_blocks(c) * kB;
  auto* out = reinterpret_cast<uint32_t*>(packed);
  auto at = [&](int64_t oc, int64_t ic) { return oc < m && ic < c ? w[oc * c + ic] : 0.0f; };
  for (int64_t j = 0; j < pairs_of(m); ++j)
    for (int64_t ic = 0; ic < cpad; ic += 2)
      for (int64_t o = 0; o < kPairFloats; ++o) {
        const int64_t oc = j * kPairFloats + o;
        *out++ = static_cast<uint32_t>(float_to_bf16(at(oc, ic))) |
                 (static_cast<uint32_t>(float_to_bf16(at(oc, ic + 1))) << 16);
      }
}

// ---- dense and grouped windows in bfloat16 ---------------------------------------------------

namespace {

// The bfloat16 slots of conv_blocked_direct_tile_avx512.h: a pair of input channels (2q in
// the low half) per 32-bit slot, both multiplied and summed into float32 by one vdpbf16ps.
struct DirectBf16 {
  static constexpr int64_t kLanes = kChannelBlock / 2;
  using Slot = uint32_t;
  static __m512 broadcast(const uint32_t* x) { return _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(*x))); }
  static __m512 mac(__m512 acc, __m512 x, __m512 w) { return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)w); }
};

}  // namespace

void blocked_pad_planes_bf16(const ConvGeometry2d& g, const float* x, uint32_t* padded, int64_t u0, int64_t u1) {
  constexpr int64_t kLanes = DirectBf16::kLanes;
  const int64_t rows = blocked_padded_rows(g), cols = blocked_padded_cols(g);
  // Input columns [0, ix1) land inside the padded row (the right padding may cut some off).
  const int64_t ix1 = std::max<int64_t>(0, std::min(g.iw, cols - g.pw));
  for (int64_t u = u0; u < u1; ++u) {
    const float* src = x + u * g.ih * g.iw * kB;
    uint32_t* dst = padded + u * rows * cols * kLanes;
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t* out = dst + r * cols * kLanes;
      const int64_t iy = r - g.ph;
      if (iy < 0 || iy >= g.ih || ix1 == 0) {
        std::memset(out, 0, static_cast<size_t>(cols * kLanes) * sizeof(uint32_t));
        continue;
      }
      std::memset(out, 0, static_cast<size_t>(g.pw * kLanes) * sizeof(uint32_t));
      const float* in = src + iy * g.iw * kB;
      for (int64_t ix = 0; ix < ix1; ++ix)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (g.pw + ix) * kLanes),
                            (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(in + ix * kB)));
      std::memset(out + (g.pw + ix1) * kLanes, 0, static_cast<size_t>((cols - g.pw - ix1) * kLanes) * sizeof(uint32_t));
    }
  }
}

size_t blocked_direct_bf16_packed_floats(int64_t m, int64_t cg, int64_t kh, int64_t kw) {
  return static_cast<size_t>(pairs_of(m) * ((cg + 1) / 2) * kh * kw * kPairFloats);
}

void blocked_direct_bf16_pack(const float* w, int64_t m, int64_t cg, int64_t kh, int64_t kw, float* packed) {
  const int64_t taps = kh * kw;
  auto* out = reinterpret_cast<uint32_t*>(packed);
  auto at = [&](int64_t oc, int64_t ic, int64_t t) { return oc < m && ic < cg ? w[(oc * cg + ic) * taps + t] : 0.0f; };
  for (int64_t j = 0; j < pairs_of(m); ++j)
    for (int64_t ic = 0; ic < cg; ic += 2)
      for (int64_t t = 0; t < taps; ++t)
        for (int64_t o = 0; o < kPairFloats; ++o) {
          const int64_t oc = j * kPairFloats + o;
          *out++ = static_cast<uint32_t>(float_to_bf16(at(oc, ic, t))) |
                   (static_cast<uint32_t>(float_to_bf16(at(oc, ic + 1, t))) << 16);
        }
}

void blocked_direct_avx512bf16(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { direct_rows<DirectBf16, A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
