// SPDX-License-Identifier: Apache-2.0
// Kernels on the blocked channel layout, AVX-512 (conv_blocked_avx512.cc) and AVX2
// (conv_blocked_avx2.cc: each block as two 8-lane vectors, the same sums in the same order),
// with their weight packing (conv_blocked_pack.cc), used by the x86 BlockChannels /
// UnblockChannels / BlockedConv kernels (nn_conv_blocked.cc). Each *_avx512 function below has
// an *_avx2 twin of the same contract that requires AVX2 and FMA instead.
//
// Blocked layout: [N, ceil(C / 16), H, W, 16], 16 consecutive channels of one position in one
// 64-byte vector; the lanes past C in the last block are zero (docs/ops_ai_ignis.md). A run of
// convolutions kept in this layout reads whole channel vectors with aligned loads: a pointwise
// convolution is a GEMM whose rows (positions) are read in place, without the per-run packing
// of the NCHW input, and a depthwise one is kh * kw aligned FMAs per 16 outputs, without the
// transposes the NCHW depthwise kernel pays to put channels in lanes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

inline constexpr int64_t kChannelBlock = 16;

// The pointwise and stem weights are packed per pair of output blocks (32 channels).
inline constexpr int64_t kPairFloats = 2 * kChannelBlock;

// Internal linkage (see gemm_blocked.h): files with and without AVX-512 flags call it.
namespace {
inline int64_t channel_blocks(int64_t channels) { return (channels + kChannelBlock - 1) / kChannelBlock; }
inline int64_t pairs_of(int64_t m) { return (channel_blocks(m) + 1) / 2; }
}  // namespace

// NCHW x (c channels, planes of hw floats) <-> blocked y, for units [u0, u1) where unit
// u = image * channel_blocks(c) + block. Blocking writes zeros into the padded lanes.
void block_channels_avx512(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1);
void unblock_channels_avx512(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1);

// ---- pointwise (1x1, stride 1, unpadded, one group) ----------------------------------------

// Weights W [m, c] packed for blocked_pointwise_avx512: per pair of output blocks (32
// channels), the c rounded up to a multiple of 16 input channels, each as 32 floats (output
// channels of the pair, zero past m); a lone last block is packed 32 wide as well.
size_t blocked_pointwise_packed_floats(int64_t m, int64_t c);
void blocked_pointwise_pack(const float* w, int64_t m, int64_t c, float* packed);

// y = act(W x + bias + residual) on blocked tensors of one image: x [channel_blocks(c)][positions][16],
// y and residual [channel_blocks(m)][positions][16]. bias padded to channel_blocks(m) * 16
// (zero past m) or null; residual may be null or alias y. Computes positions [p0, p1) of the
// output block pairs [j0, j1) (pair j = output blocks 2j, 2j + 1). Padded lanes of y are
// written as zero. Requires AVX-512F.
struct BlockedConvArgs {
  const float* x = nullptr;
  const float* w = nullptr;  // packed
  const float* bias = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
  int64_t c = 0, m = 0;
  int64_t group = 1;  // the direct kernels only
  // The direct kernels only: x is the input itself, not a padded copy (blocked_direct_in_place).
  bool x_in_place = false;
  // The AVX-512 direct kernels only: 3-wide windows at column strides 1 and 2 run
  // input-stationary (each input value broadcast once into the up to three outputs it lies
  // under), not in the 12-position tile (one broadcast per multiply-add). BlockedConv's
  // tactics "window" and "tile".
  bool window_rows = true;
  const GemmEpilogue* act = nullptr;
};
void blocked_pointwise_avx512(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                              int64_t j1);

// The same in bfloat16 (sessions of precision bf16 on CPUs with AVX512_BF16): W packed per
// pair of output blocks as, for each pair of input channels (2q, 2q + 1) of c rounded up to
// 16, 32 slots (the pair's output channels) holding both weights as bfloat16 (2q in the low
// half), half the float32 packing's size. Each tile of positions rounds its input to bfloat16
// once and vdpbf16ps sums two input channels per instruction in float32. At most
// kBlockedPointwiseBf16MaxBlocks input blocks (the rounded tile is on the stack). Requires
// AVX512_BF16.
inline constexpr int64_t kBlockedPointwiseBf16MaxBlocks = 128;
size_t blocked_pointwise_bf16_packed_floats(int64_t m, int64_t c);
void blocked_pointwise_bf16_pack(const float* w, int64_t m, int64_t c, float* packed);
void blocked_pointwise_avx512bf16(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                                  int64_t j1);

// Per-channel scales (BlockedConv's S, one image): y = x * s for blocked x of c channels
// ([channel_blocks(c)][positions][16]), blocks [b0, b1); or the packed pointwise weights with
// input channel ic scaled by s[ic], pairs [j0, j1). Requires AVX-512F.
void blocked_scale_channels_avx512(const float* x, const float* s, int64_t c, int64_t positions, float* y, int64_t b0,
                                   int64_t b1);
void blocked_pointwise_scale_weights_avx512(const float* packed, const float* s, int64_t c, float* y, int64_t j0,
                                            int64_t j1);

// Y [n, c] (NCHW [n, c, 1, 1]) = the mean over the positions of each channel of blocked x,
// for units [u0, u1) (unit = image * channel_blocks(c) + block). Requires AVX-512F.
void blocked_global_average_pool_avx512(const float* x, int64_t c, int64_t positions, float* y, int64_t u0,
                                        int64_t u1);

void block_channels_avx2(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1);
void unblock_channels_avx2(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1);
void blocked_pointwise_avx2(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                            int64_t j1);
void blocked_scale_channels_avx2(const float* x, const float* s, int64_t c, int64_t positions, float* y, int64_t b0,
                                 int64_t b1);
void blocked_pointwise_scale_weights_avx2(const float* packed, const float* s, int64_t c, float* y, int64_t j0,
                                          int64_t j1);
void blocked_global_average_pool_avx2(const float* x, int64_t c, int64_t positions, float* y, int64_t u0, int64_t u1);

// ---- depthwise (group = c = m) -----------------------------------------------------------

// Weights W [m, 1, kh, kw] packed per block as [kh * kw][16] (zero past m).
size_t blocked_depthwise_packed_floats(int64_t m, int64_t kh, int64_t kw);
void blocked_depthwise_pack(const float* w, int64_t m, int64_t kh, int64_t kw, float* packed);

// Whether blocked_depthwise_avx512 takes this geometry (any kernel, stride, padding and
// dilation).
bool blocked_depthwise_supported(const ConvGeometry2d& g);

// Output rows [r0, r1) of the depthwise convolution of n images, where row r is output row
// r % oh of plane r / oh (plane = image * channel_blocks(m) + block): x planes of ih * iw * 16
// floats, y and residual of oh * ow * 16. Requires AVX-512F.
void blocked_depthwise_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);
void blocked_depthwise_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);

// ---- plain input (stems: group 1, few input channels) ------------------------------------

// At most this many input taps (c * kh * kw): a 7x7 window over 3 channels (147, resnet's
// stem) fits. The layout pass keeps to the same bound.
inline constexpr int64_t kBlockedPlainMaxTaps = 160;

// Weights W [m, c, kh, kw] packed per pair of output blocks as [c * kh * kw][32].
size_t blocked_plain_packed_floats(int64_t m, int64_t c, int64_t kh, int64_t kw);
void blocked_plain_pack(const float* w, int64_t m, int64_t c, int64_t kh, int64_t kw, float* packed);

// Whether blocked_plain_avx512 takes this geometry (no dilation).
inline bool blocked_plain_supported(const ConvGeometry2d& g) { return g.dh == 1 && g.dw == 1; }

// Output rows [r0, r1) (row = image * oh + output row) of a convolution reading plain NCHW x
// (c channels of ih * iw) and writing blocked y (and residual) [n][channel_blocks(m)][oh * ow][16].
// No dilation. Requires AVX-512F.
void blocked_plain_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);
void blocked_plain_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);

// The same at column stride 2 in bfloat16 (sessions of precision bf16 on CPUs with
// AVX512_BF16): x is first copied by blocked_plain_bf16_pad, per image and channel (units [u0,
// u1), unit = image * c + channel), zero-padded and rounded to bfloat16, into
// blocked_plain_bf16_padded_floats(g, n * c) floats; each pair of window columns (kx, kx + 1),
// kx even, is then one 32-bit slot of it. W packed per pair of output blocks as, for each
// (channel, ky, pair of kx), 32 slots of both weights (kx in the low half; zero past kw).
// a.x is the padded copy. Requires AVX512_BF16.
size_t blocked_plain_bf16_padded_floats(const ConvGeometry2d& g, int64_t planes);
void blocked_plain_bf16_pad(const ConvGeometry2d& g, const float* x, uint32_t* padded, int64_t u0, int64_t u1);
size_t blocked_plain_bf16_packed_floats(int64_t m, int64_t c, int64_t kh, int64_t kw);
void blocked_plain_bf16_pack(const float* w, int64_t m, int64_t c, int64_t kh, int64_t kw, float* packed);
void blocked_plain_avx512bf16(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);

// ---- blocked input, any window (dense and grouped convolutions) -------------------------

// At most this many taps per output channel (c / group * kh * kw): a 3x3 window over 512
// channels. The layout pass keeps to the same bound.
inline constexpr int64_t kBlockedDirectMaxTaps = 4608;

// Groups of 2, 4 or 8 channels (c = m): each block holds whole groups, so such a convolution
// runs as one of groups of one block whose weights are zero outside each output channel's own
// group (blocked_densify_sub_block_groups): 16 / (c / group) times the multiply-adds, in the
// direct tile.
inline bool blocked_sub_block_groups(int64_t c, int64_t m, int64_t group) {
  if (group <= 1 || c != m || c % group != 0) return false;
  const int64_t cg = c / group;
  return cg > 1 && cg < kChannelBlock && kChannelBlock % cg == 0;
}

// Whether blocked_direct_avx2 takes this convolution: no dilation, at most
// kBlockedDirectMaxTaps taps, and one group, groups of whole blocks (c / group and m / group
// multiples of 16, so an output block reads its own group's input blocks only), or groups
// within a block (above).
inline bool blocked_direct_supported(const ConvGeometry2d& g, int64_t c, int64_t m, int64_t group) {
  if (g.dh != 1 || g.dw != 1 || group < 1 || c % group != 0 || m % group != 0) return false;
  if (blocked_sub_block_groups(c, m, group)) return true;
  if (c / group * g.kh * g.kw > kBlockedDirectMaxTaps) return false;
  return group == 1 || (c / group % kChannelBlock == 0 && m / group % kChannelBlock == 0);
}

// W [m, cg, kh, kw] of groups of cg channels within a block as W' [m, 16, kh, kw] of groups
// of one block: output channel o reads the 16 lanes of its block, zero outside its own
// group's cg.
void blocked_densify_sub_block_groups(const float* w, int64_t m, int64_t cg, int64_t kh, int64_t kw, float* dense);

// The input a dense or grouped window reads, zero-padded: per image and input block a plane
// of padded_rows x padded_cols positions, (oh - 1) * sh + kh by (ow - 1) * sw + kw, holding
// input position (iy, ix) at (iy + ph, ix + pw), so that every output position's window lies
// inside it. blocked_pad_planes writes units [u0, u1) (unit = image * channel_blocks(c) +
// block) of x [n][channel_blocks(c)][ih * iw][16]. Plain C++ (conv_blocked_pack.cc).
inline int64_t blocked_padded_rows(const ConvGeometry2d& g) { return (g.oh - 1) * g.sh + g.kh; }
inline int64_t blocked_padded_cols(const ConvGeometry2d& g) { return (g.ow - 1) * g.sw + g.kw; }
void blocked_pad_planes(const ConvGeometry2d& g, const float* x, float* padded, int64_t u0, int64_t u1);
// The positions a strided 1x1 without padding reads, (oy * sh, ox * sw) for every output
// position, as planes of oh * ow positions: units [u0, u1) as blocked_pad_planes. Plain C++.
void blocked_subsample_planes(const ConvGeometry2d& g, const float* x, float* y, int64_t u0, int64_t u1);
// Whether every window lies inside the input as it is (no padding before, none needed after:
// strided 1x1s), so the direct kernels read x in place (BlockedConvArgs::x_in_place) without
// the padded copy.
inline bool blocked_direct_in_place(const ConvGeometry2d& g) {
  return g.ph == 0 && g.pw == 0 && blocked_padded_rows(g) <= g.ih && blocked_padded_cols(g) <= g.iw;
}

// One output row of a window walk over blocked input, as the direct and plain-input kernels
// read it: every tap as an input offset (from `x`, at the row's first window column) and a
// packed-weight row.
struct BlockedWindowRow {
  const ConvGeometry2d* g = nullptr;
  const BlockedConvArgs* a = nullptr;
  const float* x = nullptr;  // the image's (and group's) input
  int64_t col = 1;           // floats between the inputs of adjacent output columns
  int64_t w_pair = 0;        // floats of packed W per pair of output blocks
  int64_t image = 0, oy = 0;
  int64_t taps = 0;
  const int64_t* x_off = nullptr;
  const int64_t* w_row = nullptr;
};

// The direct kernels' walk (blocked_direct_avx2 / _avx512 below): every tap of a group's
// window, in the packing's order (channel, ky, kx), as an offset into the group's padded input
// (from the window's top-left corner; padded planes, or the input's own where a.x_in_place)
// and a packed-weight row; then, for output rows [r0, r1) (row = image * oh + output row) and
// each group, row.template operator()<S>(r, b0, b1) with r that row of the group's input,
// [b0, b1) the group's output blocks and S the column stride in slots (kLanes or 2 * kLanes,
// 0 for others: r.col). The input holds kLanes slots per position: 16 floats, or 8 pairs of
// bfloat16 channels (blocked_direct_avx512bf16), whose taps are then pairs of channels.
// Internal linkage (see gemm_blocked.h): the AVX2 and AVX-512 files each compile their own.
namespace {
template <int64_t kLanes = kChannelBlock, class F>
void blocked_direct_walk(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1, F&& row) {
  constexpr int64_t kPerSlot = kChannelBlock / kLanes;  // channels per slot
  const int64_t cg = a.c / a.group, group_blocks = channel_blocks(a.m) / a.group;
  const int64_t slots = (cg + kPerSlot - 1) / kPerSlot;
  const int64_t cols = a.x_in_place ? g.iw : blocked_padded_cols(g);
  const int64_t plane = (a.x_in_place ? g.ih : blocked_padded_rows(g)) * cols * kLanes;
  const int64_t cb = channel_blocks(a.c);
  int64_t x_off[kBlockedDirectMaxTaps], w_row[kBlockedDirectMaxTaps];
  BlockedWindowRow r;
  r.g = &g;
  r.a = &a;
  r.col = g.sw * kLanes;
  r.w_pair = slots * g.kh * g.kw * kPairFloats;
  r.x_off = x_off;
  r.w_row = w_row;
  for (int64_t c = 0; c < slots; ++c)
    for (int64_t ky = 0; ky < g.kh; ++ky)
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        x_off[r.taps] = c / kLanes * plane + (ky * cols + kx) * kLanes + c % kLanes;
        w_row[r.taps++] = (c * g.kh + ky) * g.kw + kx;
      }
  for (int64_t i = r0; i < r1; ++i) {
    r.image = i / g.oh;
    r.oy = i % g.oh;
    // Groups of whole blocks: each output block reads its own group's input blocks.
    for (int64_t grp = 0; grp < a.group; ++grp) {
      const int64_t at = (r.image * cb + grp * (cg / kChannelBlock)) * plane + r.oy * g.sh * cols * kLanes;
      // a.x holds 32-bit slots: floats, or the bfloat16 pairs the kernel reads through its Slot type.
      r.x = a.x + at;
      const int64_t b0 = grp * group_blocks, b1 = b0 + group_blocks;
      if (g.sw == 1)
        row.template operator()<kLanes>(r, b0, b1);
      else if (g.sw == 2)
        row.template operator()<2 * kLanes>(r, b0, b1);
      else
        row.template operator()<0>(r, b0, b1);
    }
  }
}
}  // namespace

// Output rows [r0, r1) (row = image * oh + output row) of a convolution reading a.x padded by
// blocked_pad_planes and writing blocked y (and residual) [n][channel_blocks(m)][oh * ow][16],
// W [m, c / group, kh, kw] packed as blocked_plain_pack packs it (with c / group channels);
// a.group groups (channel_blocks(a.m) / a.group output blocks each). The AVX-512 twin
// (conv_blocked_direct_avx512.cc) runs 12 positions x 32 channels per tile.
void blocked_direct_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);
void blocked_direct_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);

// The same in bfloat16 (sessions of precision bf16 on CPUs with AVX512_BF16): the input
// padded as blocked_pad_planes pads it, each position's 16 channels rounded to 8 bfloat16
// pairs (32 bytes; blocked_pad_planes_bf16, always a copy: never read in place), and W [m,
// c / group, kh, kw] packed per pair of output blocks as, for each pair of input channels
// (2q, 2q + 1) of c / group rounded up to even and each (ky, kx), 32 slots (the pair's output
// channels) holding both weights as bfloat16 (2q in the low half); the taps are then pairs of
// channels, each summed by one vdpbf16ps in float32. a.x is the padded copy. Requires
// AVX512_BF16.
void blocked_pad_planes_bf16(const ConvGeometry2d& g, const float* x, uint32_t* padded, int64_t u0, int64_t u1);
size_t blocked_direct_bf16_packed_floats(int64_t m, int64_t cg, int64_t kh, int64_t kw);
void blocked_direct_bf16_pack(const float* w, int64_t m, int64_t cg, int64_t kh, int64_t kw, float* packed);
void blocked_direct_avx512bf16(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1);

// ---- Winograd F(4x4, 3x3) on blocked input (dense 3x3 at unit stride) -------------------

// The NCHW F(4x4) (conv_winograd.h) with the channels in the vector lanes instead of tiles:
// the output's 4x4 tiles are numbered over all images in row-major order, and a range of them
// runs in blocks of at most blocked_winograd4_block_tiles, each block in three stages:
//   1. input transform: V_k [tiles x c_pad], one row per tile, for the 36 points k;
//   2. 36 GEMMs M_k [tiles x m_pad] = V_k x U_k^T (winograd4_weights_transposed);
//   3. output transform, plus bias, residual and activation, written blocked.
// The blocked layout needs no transposes around the transforms (a 6x6 window of 16-channel
// vectors is 36 aligned loads), so a run of convolutions stays blocked through its 3x3s.
// Geometry and channels as conv_winograd_feasible: 3x3, unit strides and dilations, any
// padding, one group, 16 to 256 channels each side.
namespace {
inline int64_t blocked_winograd4_tiles(const ConvGeometry2d& g) { return ((g.oh + 3) / 4) * ((g.ow + 3) / 4); }
}  // namespace
// Tiles per block: V and M of a block in about 2 MiB (the core's L2), 32 to 128 tiles, a
// multiple of the GEMM's 8 rows.
int64_t blocked_winograd4_block_tiles(int64_t c, int64_t m);
// Floats of scratch one call of blocked_winograd4_avx512 needs for a range of `tiles` tiles.
size_t blocked_winograd4_scratch_floats(int64_t c, int64_t m, int64_t tiles);
// The tiles [t0, t1) of y = act(conv(x) + bias + residual) on blocked tensors (a.x, a.y,
// a.residual as in blocked_direct_avx2, unpadded input; a.bias padded to whole blocks or
// null); u: the 36 packed U_k^T; scratch: blocked_winograd4_scratch_floats(a.c, a.m, t1 -
// t0) floats, 64-byte aligned. Padded lanes of y are written as zero. Requires AVX-512F.
void blocked_winograd4_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, const PackedMatrix* u, int64_t t0,
                              int64_t t1, float* scratch);

// One instruction set's blocked kernels, as the x86 kernel objects call them.
struct BlockedKernels {
  void (*block)(const float*, int64_t, int64_t, float*, int64_t, int64_t);
  void (*unblock)(const float*, int64_t, int64_t, float*, int64_t, int64_t);
  void (*pointwise)(const BlockedConvArgs&, int64_t, int64_t, int64_t, int64_t, int64_t);
  void (*scale_channels)(const float*, const float*, int64_t, int64_t, float*, int64_t, int64_t);
  void (*scale_weights)(const float*, const float*, int64_t, float*, int64_t, int64_t);
  void (*global_average_pool)(const float*, int64_t, int64_t, float*, int64_t, int64_t);
  void (*depthwise)(const ConvGeometry2d&, const BlockedConvArgs&, int64_t, int64_t);
  void (*plain)(const ConvGeometry2d&, const BlockedConvArgs&, int64_t, int64_t);
  void (*direct)(const ConvGeometry2d&, const BlockedConvArgs&, int64_t, int64_t);
};

}  // namespace ignis::kernels::x86
