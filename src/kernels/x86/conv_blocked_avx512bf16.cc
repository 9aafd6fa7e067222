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

// ---- plain input (stems) at stride 2 in bfloat16 ---------------------------------------------
//
// The image rounded once to a zero-padded bfloat16 copy, so that at column stride 2 each pair
// of window columns (kx, kx + 1), kx even, of every output position is one aligned 32-bit
// slot: a 7-wide window is 4 slots per row (the last pair's second weight zero), and the
// direct tiles (conv_blocked_direct_tile_avx512.h) run the c * kh * ceil(kw / 2) slots as
// their depth, one slot per output column.

namespace {

// Columns of a padded row (even), its slots, and its rows.
int64_t plain_bf16_cols(const ConvGeometry2d& g) { return ((g.ow - 1) * g.sw + g.kw + 1) / 2 * 2; }
int64_t plain_bf16_rows(const ConvGeometry2d& g) { return (g.oh - 1) * g.sh + g.kh; }

}  // namespace

size_t blocked_plain_bf16_padded_floats(const ConvGeometry2d& g, int64_t planes) {
  return static_cast<size_t>(planes * plain_bf16_rows(g) * plain_bf16_cols(g) / 2);
}

void blocked_plain_bf16_pad(const ConvGeometry2d& g, const float* x, uint32_t* padded, int64_t u0, int64_t u1) {
  const int64_t rows = plain_bf16_rows(g), cols = plain_bf16_cols(g), slots = cols / 2;
  for (int64_t u = u0; u < u1; ++u) {
    const float* src = x + u * g.ih * g.iw;
    uint32_t* dst = padded + u * rows * slots;
    for (int64_t r = 0; r < rows; ++r) {
      uint32_t* out = dst + r * slots;
      const int64_t iy = r - g.ph;
      if (iy < 0 || iy >= g.ih) {
        std::memset(out, 0, static_cast<size_t>(slots) * sizeof(uint32_t));
        continue;
      }
      // 16 padded columns (8 slots) at a time, from input columns [col - pw, col - pw + 16).
      for (int64_t col = 0; col < cols; col += 16) {
        const int64_t ix = col - g.pw;
        const __mmask16 inside = lanes(-ix, std::min<int64_t>(g.iw - ix, cols - col));
        const __m512 v = _mm512_maskz_loadu_ps(inside, src + iy * g.iw + ix);
        const __m256i pairs = (__m256i)_mm512_cvtneps_pbh(v);
        const int64_t n = std::min<int64_t>(8, (cols - col) / 2);
        _mm256_mask_storeu_epi32(out + col / 2, static_cast<__mmask8>((1u << n) - 1), pairs);
      }
    }
  }
}

size_t blocked_plain_bf16_packed_floats(int64_t m, int64_t c, int64_t kh, int64_t kw) {
  return static_cast<size_t>(pairs_of(m) * c * kh * ((kw + 1) / 2) * kPairFloats);
}

void blocked_plain_bf16_pack(const float* w, int64_t m, int64_t c, int64_t kh, int64_t kw, float* packed) {
  auto* out = reinterpret_cast<uint32_t*>(packed);
  auto at = [&](int64_t oc, int64_t ch, int64_t ky, int64_t kx) {
    return oc < m && kx < kw ? w[((oc * c + ch) * kh + ky) * kw + kx] : 0.0f;
  };
  for (int64_t j = 0; j < pairs_of(m); ++j)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; kx += 2)
          for (int64_t o = 0; o < kPairFloats; ++o) {
            const int64_t oc = j * kPairFloats + o;
            *out++ = static_cast<uint32_t>(float_to_bf16(at(oc, ch, ky, kx))) |
                     (static_cast<uint32_t>(float_to_bf16(at(oc, ch, ky, kx + 1))) << 16);
          }
}

namespace {

template <Activation A>
void plain_rows_bf16(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  const int64_t slots = plain_bf16_cols(g) / 2, plane = plain_bf16_rows(g) * slots, kq = (g.kw + 1) / 2;
  const int64_t blocks = channel_blocks(a.m);
  int64_t x_off[kBlockedPlainMaxTaps], w_row[kBlockedPlainMaxTaps];
  DirectRow r;
  r.g = &g;
  r.a = &a;
  r.col = 1;  // column stride 2: one slot per output column
  r.w_pair = a.c * g.kh * kq * kPairFloats;
  r.x_off = x_off;
  r.w_row = w_row;
  for (int64_t ch = 0; ch < a.c; ++ch)
    for (int64_t ky = 0; ky < g.kh; ++ky)
      for (int64_t q = 0; q < kq; ++q) {
        x_off[r.taps] = ch * plane + ky * slots + q;
        w_row[r.taps++] = (ch * g.kh + ky) * kq + q;
      }
  for (int64_t i = r0; i < r1; ++i) {
    r.image = i / g.oh;
    r.oy = i % g.oh;
    r.x = a.x + r.image * a.c * plane + r.oy * g.sh * slots;
    for (int64_t block = 0; block < blocks; block += 2) {
      if (block + 1 < blocks) direct_row<DirectBf16, 2, 1, A>(r, block, k);
      else direct_row<DirectBf16, 1, 1, A>(r, block, k);
    }
  }
}

}  // namespace

void blocked_plain_avx512bf16(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { plain_rows_bf16<A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
