// SPDX-License-Identifier: Apache-2.0
// Dense and grouped windows on blocked input, AVX-512 (blocked_direct_avx512, conv_blocked.h):
// the AVX2 direct kernel's scheme (conv_blocked_avx2.cc) on the pointwise tile's shape. The
// tiles are in conv_blocked_direct_tile_avx512.h, which the bfloat16 kernel shares.
//
// The input is a zero-padded copy (blocked_pad_planes), so every output position's window
// lies inside it and every row runs in tiles: 12 output positions x a pair of output blocks
// (24 accumulators), the c / group * kh * kw taps as its depth, each tap two weight vectors
// (the pair's 32 channels, packed as blocked_plain_pack packs them) and a broadcast of the
// input value under each position. Row ends take tiles of 4, then of 1, positions.
//
// Windows 3 wide at strides 1 and 2 run input-stationary instead (window_row_w3). With one
// weight vector per tap (a group of one block: regnet's, resnext's), the tile above spends one
// broadcast load per multiply-add, and this CPU family retires about one such load-fed FMA
// per cycle, half its FMA rate (measured on Ice Lake: 12 accumulators fed by 12 distinct
// broadcasts ran 95 GF/s on one core, against 177 from registers). So each input value under
// a row of P outputs is broadcast once and multiplies the three weight vectors of its
// (channel, window row) into the outputs it lies under: 3P FMAs per P + 2 broadcasts at unit
// stride, per 2P + 1 at stride 2, for each output block (one, or a pair: 12 or 8 positions).
// A row's last positions are one narrower tile, not tiles of 4 and 1 (a 7-wide output row ran
// as 4 + 1 + 1 + 1, latency-bound). Grouped 3x3s ran 2-2.8x faster per layer than in the
// tile above, dense ones 1.2-1.5x.
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/conv_blocked_direct_tile_avx512.h"

namespace ignis::kernels::x86 {

namespace {

// The float32 slots of conv_blocked_direct_tile_avx512.h: one channel per slot, one FMA.
struct DirectF32 {
  static constexpr int64_t kLanes = kChannelBlock;
  using Slot = float;
  static __m512 broadcast(const float* x) { return _mm512_set1_ps(*x); }
  static __m512 mac(__m512 acc, __m512 x, __m512 w) { return _mm512_fmadd_ps(x, w, acc); }
};

}  // namespace

void blocked_direct_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { direct_rows<DirectF32, A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
