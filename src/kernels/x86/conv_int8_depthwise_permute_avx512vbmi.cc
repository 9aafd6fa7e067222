// SPDX-License-Identifier: Apache-2.0
// The depthwise int8 convolution on AVX-512 VBMI + VNNI with 16 output positions of one
// channel plane in the vector lanes, for weights w - w_zp that fit int8.
//
// The plane is copied into scratch padded with x's zero point (int8 x flipped to uint8 by
// xor 0x80, the zero point moved by 128, so vpdpbusd's unsigned operand holds it and
// sum_t (x - x_zp) w_t = sum_t x w_t - x_zp sum_t w_t holds at the borders too). For a block
// of 16 outputs and one kernel row, the taps' bytes all lie in one 64-byte load
// (15 * SW + (KW - 1) * DW < 64): vpermb gathers, for lane j, the bytes of taps 4q .. 4q + 3 of
// that row (at j * SW + kx * DW) into lane j's four bytes, and one vpdpbusd adds their
// products with the row quad's four int8 weights (broadcast; taps past KW weigh 0), where the
// int16 forms spend a conversion and an interleave per pair of taps. Four blocks are computed
// together so the vpdpbusd chains overlap, then requantized (requantize_avx512.h).
//
// 3x3 and 5x5 kernels with strides 1 or 2 and no dilation go by groups of four output rows
// and 16 columns: each input row the group reads is loaded and permuted once and serves every
// output row whose taps read it (3x3: 6 vpermb per 4 blocks with unit strides, 9 with
// strides 2, against 12), and the bytes go straight to y. Where two planes' outputs fit the 16
// lanes (7x7 outputs), two channels go together, their padded planes side by side in each
// row and their weights, offsets and multipliers per lane. Other geometries take blocks one by
// one: with unit strides flat over the plane (output f = oy * W + ox, W the padded width, reads
// padded position f + ky * DH * W + kx * DW, so blocks run across rows; the W - OW extra
// outputs of each row are computed into a buffer and dropped when the valid ones are copied
// out), strided ones row by row.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kLanes = 16;    // outputs per block
constexpr int kInFlight = 4;      // blocks computed together
constexpr int64_t kMaxQuads = 2;  // taps of a kernel row in groups of four: KW <= 8
// All lanes, for the maskz forms (GCC 12 warns that the plain ones read an undefined register).
constexpr __mmask64 kAll64 = ~__mmask64{0};
constexpr __mmask16 kAll16 = 0xFFFF;
// Readable bytes past the padded plane: a block's load reaches 63 bytes past its first tap,
// and the flat walk's last group of blocks up to 4 blocks past the last output.
constexpr int64_t kSlack = 64 + kInFlight * kLanes;

struct PermutePlane {
  bool flat;           // unit strides: blocks run across rows
  int64_t width;       // bytes per padded row
  int64_t rows;        // padded rows (past the input's: padding)
  int64_t row_blocks;  // blocks per output row (strided walk)
  int64_t blocks;      // blocks per plane
};

PermutePlane permute_plane(const ConvGeometry2d& g) {
  PermutePlane f;
  f.flat = g.sh == 1 && g.sw == 1;
  f.width = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  // Whole groups of kInFlight output rows (the row-group walk computes past the last one).
  f.rows = ((g.oh + kInFlight - 1) / kInFlight * kInFlight - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  f.row_blocks = (g.ow + kLanes - 1) / kLanes;
  f.blocks = f.flat ? (g.oh * f.width + kLanes - 1) / kLanes : g.oh * f.row_blocks;
  return f;
}

// Whole 64-byte stores of the last row and the slack end up to 63 bytes past the slack.
int64_t plane_bytes(const PermutePlane& f) { return f.rows * f.width + kSlack; }
int64_t plane_alloc(const PermutePlane& f) { return (plane_bytes(f) + 63 + 63) / 64 * 64; }

// The flat walk's output buffer: whole groups of blocks.
int64_t out_bytes(const PermutePlane& f) {
  return f.flat ? (f.blocks + kInFlight - 1) / kInFlight * kInFlight * kLanes : 0;
}

__mmask64 first_bytes(int64_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

// n bytes from src to dst, xor `flip`.
void copy_bytes(const uint8_t* src, uint8_t* dst, int64_t n, __m512i flip) {
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 k = first_bytes(n - i);
    _mm512_mask_storeu_epi8(dst + i, k, _mm512_xor_si512(_mm512_maskz_loadu_epi8(k, src + i), flip));
  }
}

// The input bytes of 64 padded columns from i: columns [pw, pw + n) hold input columns
// [0, n).
__mmask64 input_columns(int64_t i, int64_t pw, int64_t n) {
  const int64_t lo = std::clamp<int64_t>(pw - i, 0, 64), hi = std::clamp<int64_t>(pw + n - i, 0, 64);
  return first_bytes(hi) & ~first_bytes(lo);
}

// A plane padded with `fill` (x's zero point, as uint8), input rows flipped to uint8 by xor
// `flip` where x is int8. Each padded row is one masked load per 64 columns (the input row's
// bytes over `fill`, the masks the same for every row), stored whole: bytes past the row's
// end are fill, and the next row's store overwrites them.
void pad_plane(const ConvGeometry2d& g, const PermutePlane& f, const uint8_t* x, __m512i fill, __m512i flip,
               uint8_t* plane) {
  const int64_t n = std::clamp<int64_t>(f.width - g.pw, 0, g.iw);
  const int64_t top = std::min(g.ph, f.rows), bottom = std::min(g.ph + g.ih, f.rows);
  const __m512i flipped_fill = _mm512_xor_si512(fill, flip);
  for (int64_t py = 0; py < top; ++py)
    for (int64_t i = 0; i < f.width; i += 64) _mm512_storeu_si512(plane + py * f.width + i, fill);
  if (f.width <= 64) {
    // One load per row: the common case, with the mask out of the loop.
    const __mmask64 k = input_columns(0, g.pw, n);
    const uint8_t* in = x + (top - g.ph) * g.iw - g.pw;
    for (int64_t py = top; py < bottom; ++py, in += g.iw)
      _mm512_storeu_si512(plane + py * f.width, _mm512_xor_si512(_mm512_mask_loadu_epi8(flipped_fill, k, in), flip));
  } else {
    // The masks of the first rows' chunks once (up to 512 columns, 224 at 112x112 stride 2).
    constexpr int64_t kKept = 8;
    __mmask64 kept[kKept];
    for (int64_t c = 0; c < kKept; ++c) kept[c] = input_columns(64 * c, g.pw, n);
    for (int64_t py = top; py < bottom; ++py) {
      // Column i of the row is input column i - pw.
      const uint8_t* in = x + (py - g.ph) * g.iw - g.pw;
      for (int64_t i = 0; i < f.width; i += 64) {
        const __mmask64 k = i < 64 * kKept ? kept[i / 64] : input_columns(i, g.pw, n);
        _mm512_storeu_si512(plane + py * f.width + i,
                            _mm512_xor_si512(_mm512_mask_loadu_epi8(flipped_fill, k, in + i), flip));
      }
    }
  }
  for (int64_t i = bottom * f.width; i < plane_bytes(f); i += 64) _mm512_storeu_si512(plane + i, fill);
}

// What every block of a plane reads: the vpermb indexes and kernel row offsets (per
// geometry), the weights and offset (per channel).
struct Taps {
  __m512i index[kMaxQuads];         // lane j's bytes <- taps 4q .. 4q + 3 of a kernel row
  int64_t row_at[64];               // kernel row ky's offset in the padded plane
  int64_t rows;                     // KH
  int32_t quads[64 * kMaxQuads];    // [KH x quads]: four int8 weights w_t each (0 past KW)
  __m512i offset;                   // bias - x_zp * sum_t w_t
};

// kInFlight blocks' bytes (multipliers m per lane).
inline void requantize_blocks(const RequantAvx512& rq, const __m512i* acc, __m512 m, __m128i* bytes) {
  for (int i = 0; i < kInFlight; ++i) bytes[i] = rq.bytes(acc[i], m);
}

// kInFlight blocks' sums, the blocks' first taps at src[i].
template <int kQuads>
inline void sum_blocks(const Taps& t, const uint8_t* const* src, __m512i* acc) {
  for (int i = 0; i < kInFlight; ++i) acc[i] = t.offset;
  for (int64_t ky = 0; ky < t.rows; ++ky) {
    const int64_t at = t.row_at[ky];
    for (int i = 0; i < kInFlight; ++i) {
      const __m512i x = _mm512_loadu_si512(src[i] + at);
      for (int q = 0; q < kQuads; ++q)
        acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_maskz_permutexvar_epi8(kAll64, t.index[q], x),
                                     _mm512_set1_epi32(t.quads[ky * kQuads + q]));
    }
  }
}

// The sums of kInFlight output rows by 16 columns, the first row's first tap at src: each
// input row the rows' taps read is loaded and permuted once.
template <int kQuads, int kRows, int kStride, class Weights>
inline void sum_rows(const Taps& t, const uint8_t* src, int64_t width, __m512i offset, Weights weights,
                     __m512i* acc) {
  constexpr int kInRows = (kInFlight - 1) * kStride + kRows;
  __m512i v[kInRows][kQuads];
#pragma GCC unroll 16
  for (int j = 0; j < kInRows; ++j) {
    const __m512i x = _mm512_loadu_si512(src + j * width);
#pragma GCC unroll 2
    for (int q = 0; q < kQuads; ++q) v[j][q] = _mm512_maskz_permutexvar_epi8(kAll64, t.index[q], x);
  }
#pragma GCC unroll 4
  for (int i = 0; i < kInFlight; ++i) {
    acc[i] = offset;
#pragma GCC unroll 8
    for (int ky = 0; ky < kRows; ++ky)
#pragma GCC unroll 2
      for (int q = 0; q < kQuads; ++q) acc[i] = _mm512_dpbusd_epi32(acc[i], v[i * kStride + ky][q], weights(ky, q));
  }
}

// One plane's outputs from its padded plane to y. kStride > 0 (both strides, unit dilations,
// KH = kRows): groups of kInFlight output rows by 16 columns; 0: any geometry, blocks of 16
// outputs one by one (through `out` for the flat walk).
template <int kQuads, int kRows, int kStride>
void walk(const ConvGeometry2d& g, const PermutePlane& f, const Taps& t, const RequantAvx512& rq, float multiplier,
          const uint8_t* plane, uint8_t* out, uint8_t* y) {
  const __m512 m = _mm512_set1_ps(multiplier);
  __m128i bytes[kInFlight];
  const auto requantize = [&](const __m512i* acc) { requantize_blocks(rq, acc, m, bytes); };
  __m512i acc[kInFlight];
  if constexpr (kStride > 0) {
    for (int64_t oy0 = 0; oy0 < g.oh; oy0 += kInFlight) {
      const int64_t rows = std::min<int64_t>(kInFlight, g.oh - oy0);
      for (int64_t cx = 0; cx < g.ow; cx += kLanes) {
        sum_rows<kQuads, kRows, kStride>(t, plane + oy0 * kStride * f.width + cx * kStride, f.width, t.offset,
                                         [&](int ky, int q) { return _mm512_set1_epi32(t.quads[ky * kQuads + q]); },
                                         acc);
        requantize(acc);
        const int64_t valid = std::min(kLanes, g.ow - cx);
        const auto keep = static_cast<__mmask16>((1u << valid) - 1);
        for (int64_t i = 0; i < rows; ++i) {
          uint8_t* dst = y + (oy0 + i) * g.ow + cx;
          if (valid == kLanes) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), bytes[i]);
          else _mm_mask_storeu_epi8(dst, keep, bytes[i]);
        }
      }
    }
    return;
  }
  const uint8_t* src[kInFlight];
  if (f.flat) {
    for (int64_t b = 0; b < f.blocks; b += kInFlight) {
      for (int i = 0; i < kInFlight; ++i) src[i] = plane + (b + i) * kLanes;
      sum_blocks<kQuads>(t, src, acc);
      requantize(acc);
      for (int i = 0; i < kInFlight; ++i)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (b + i) * kLanes), bytes[i]);
    }
    const __m512i none = _mm512_setzero_si512();
    for (int64_t oy = 0; oy < g.oh; ++oy) copy_bytes(out + oy * f.width, y + oy * g.ow, g.ow, none);
    return;
  }
  // Strided: blocks (oy, bx) in row order; a group's missing blocks repeat its last one and
  // store nothing.
  uint8_t* dst[kInFlight];
  __mmask16 keep[kInFlight];
  int64_t oy = 0, bx = 0;
  for (int64_t b = 0; b < f.blocks; b += kInFlight) {
    for (int i = 0; i < kInFlight; ++i) {
      if (b + i < f.blocks) {
        const int64_t ox = bx * kLanes, valid = std::min(kLanes, g.ow - ox);
        src[i] = plane + oy * g.sh * f.width + ox * g.sw;
        dst[i] = y + oy * g.ow + ox;
        keep[i] = static_cast<__mmask16>((1u << valid) - 1);
        if (++bx == f.row_blocks) {
          bx = 0;
          ++oy;
        }
      } else {
        src[i] = src[i - 1];
        dst[i] = dst[i - 1];
        keep[i] = 0;
      }
    }
    sum_blocks<kQuads>(t, src, acc);
    requantize(acc);
    for (int i = 0; i < kInFlight; ++i) _mm_mask_storeu_epi8(dst[i], keep[i], bytes[i]);
  }
}

// Channel c's weights as row quads of four int8 bytes (to `quads`, zero past KW; int8 by the
// caller's guarantee) and its offset bias - x_zp * sum_t w_t.
template <int kQuads>
int32_t prepare_channel(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int32_t x_zp, int64_t c,
                        int32_t* quads) {
  __m128i sum = _mm_setzero_si128();
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int q = 0; q < kQuads; ++q) {
      const int64_t n = std::min<int64_t>(4, g.kw - 4 * q);
      const __m128i w =
          _mm_maskz_loadu_epi32(static_cast<__mmask8>((1u << n) - 1), p.w + (c * g.kh + ky) * g.kw + 4 * q);
      sum = _mm_add_epi32(sum, w);
      quads[ky * kQuads + q] = _mm_cvtsi128_si32(_mm_maskz_cvtepi32_epi8(0xF, w));
    }
  const auto total = [](__m128i v) {
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1)));
  };
  // Wrapping like the reference's int32 sum.
  const uint32_t bias = p.bias ? static_cast<uint32_t>(p.bias[c]) : 0;
  return static_cast<int32_t>(bias - static_cast<uint32_t>(x_zp) * static_cast<uint32_t>(total(sum)));
}

// Two planes side by side in each padded row, for narrow outputs (7 wide at 3x3 and 5x5): the first
// channel's padded row at column 0, the second's at `shift`, overlapping where both hold
// padding; their outputs in lanes [0, OW) and [lanes, lanes + OW).
struct PairPlane {
  int64_t width;  // per channel: the padded width
  int64_t shift;  // a multiple of the stride, past the first channel's input columns, and
                  // with the second's left padding reaching the first's width
  int64_t pitch;  // shift + width
  int64_t lanes;  // shift / stride
};

PairPlane pair_plane(const ConvGeometry2d& g, const PermutePlane& f) {
  PairPlane pp;
  pp.width = f.width;
  const int64_t n = std::clamp<int64_t>(f.width - g.pw, 0, g.iw);
  pp.shift = (std::max(g.pw + n, f.width - g.pw) + g.sw - 1) / g.sw * g.sw;
  pp.pitch = pp.shift + pp.width;
  pp.lanes = pp.shift / g.sw;
  return pp;
}

// Whether the row-group walk may take pairs of planes: both channels' outputs fit the 16 lanes.
bool pairs_fit(const ConvGeometry2d& g, const PermutePlane& f) {
  const PairPlane pp = pair_plane(g, f);
  return pp.width <= 64 && pp.lanes + g.ow <= kLanes;
}

int64_t pair_bytes(const ConvGeometry2d& g, const PermutePlane& f) {
  return (f.rows * pair_plane(g, f).pitch + kSlack + 63 + 63) / 64 * 64;
}

// Planes a and b padded side by side (as pad_plane; rows stored with masks of their width,
// b's after a's: where they overlap both are padding).
void pad_pair(const ConvGeometry2d& g, const PermutePlane& f, const PairPlane& pp, const uint8_t* a,
              const uint8_t* b, __m512i fill, __m512i flip, uint8_t* plane) {
  const int64_t n = std::clamp<int64_t>(pp.width - g.pw, 0, g.iw);
  const __mmask64 k = input_columns(0, g.pw, n), row = first_bytes(pp.width);
  const __m512i flipped_fill = _mm512_xor_si512(fill, flip);
  for (int64_t py = 0; py < f.rows; ++py) {
    const int64_t iy = py - g.ph;
    uint8_t* dst = plane + py * pp.pitch;
    if (iy < 0 || iy >= g.ih) {
      _mm512_mask_storeu_epi8(dst, row, fill);
      _mm512_mask_storeu_epi8(dst + pp.shift, row, fill);
      continue;
    }
    const int64_t at = iy * g.iw - g.pw;
    _mm512_mask_storeu_epi8(dst, row, _mm512_xor_si512(_mm512_mask_loadu_epi8(flipped_fill, k, a + at), flip));
    _mm512_mask_storeu_epi8(dst + pp.shift, row,
                            _mm512_xor_si512(_mm512_mask_loadu_epi8(flipped_fill, k, b + at), flip));
  }
  for (int64_t i = f.rows * pp.pitch; i < f.rows * pp.pitch + kSlack; i += 64) _mm512_storeu_si512(plane + i, fill);
}

template <int kQuads, int kRows, int kStride>
void run_pairs(const ConvGeometry2d& g, const PermutePlane& f, const Taps& t, const DepthwiseInt8Channels& p,
               int64_t c_begin, int64_t c_end, uint8_t* scratch) {
  const int32_t x_zp = p.x_zero_point + (p.x_signed ? 128 : 0);
  const __m512i fill = _mm512_set1_epi8(static_cast<char>(x_zp));
  const __m512i flip = _mm512_set1_epi8(p.x_signed ? static_cast<char>(0x80) : 0);
  const RequantAvx512 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  const PairPlane pp = pair_plane(g, f);
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
  const auto second = static_cast<__mmask16>(~((1u << pp.lanes) - 1));
  const auto keep_a = static_cast<__mmask16>((1u << g.ow) - 1), keep_b = static_cast<__mmask16>(keep_a << pp.lanes);
  for (int64_t c = c_begin; c < c_end; c += 2) {
    // An odd last channel pairs with itself.
    const int64_t ca = c, cb = std::min(c + 1, c_end - 1);
    pad_pair(g, f, pp, p.x + ca * in_plane, p.x + cb * in_plane, fill, flip, scratch);
    int32_t qa[kRows * kQuads], qb[kRows * kQuads];
    const int32_t off_a = prepare_channel<kQuads>(g, p, x_zp, ca, qa);
    const int32_t off_b = prepare_channel<kQuads>(g, p, x_zp, cb, qb);
    __m512i w[kRows * kQuads];
    for (int i = 0; i < kRows * kQuads; ++i)
      w[i] = _mm512_mask_blend_epi32(second, _mm512_set1_epi32(qa[i]), _mm512_set1_epi32(qb[i]));
    const __m512i offset = _mm512_mask_blend_epi32(second, _mm512_set1_epi32(off_a), _mm512_set1_epi32(off_b));
    const float ma = p.multiplier[ca], mb = p.multiplier[cb];
    const __m512 m = _mm512_mask_blend_ps(second, _mm512_set1_ps(ma), _mm512_set1_ps(mb));
    uint8_t* ya = p.y + ca * out_plane;
    uint8_t* yb = p.y + cb * out_plane - pp.lanes;  // lane pp.lanes is its column 0
    __m512i acc[kInFlight];
    __m128i bytes[kInFlight];
    for (int64_t oy0 = 0; oy0 < g.oh; oy0 += kInFlight) {
      sum_rows<kQuads, kRows, kStride>(t, scratch + oy0 * kStride * pp.pitch, pp.pitch, offset,
                                       [&](int ky, int q) { return w[ky * kQuads + q]; }, acc);
      requantize_blocks(rq, acc, m, bytes);
      for (int64_t i = 0; i < std::min<int64_t>(kInFlight, g.oh - oy0); ++i) {
        _mm_mask_storeu_epi8(ya + (oy0 + i) * g.ow, keep_a, bytes[i]);
        _mm_mask_storeu_epi8(yb + (oy0 + i) * g.ow, keep_b, bytes[i]);
      }
    }
  }
}

template <int kQuads, int kRows, int kStride>
void run_channels(const ConvGeometry2d& g, const PermutePlane& f, Taps& t, const DepthwiseInt8Channels& p,
                  int64_t c_begin, int64_t c_end, uint8_t* scratch) {
  if constexpr (kStride > 0) {
    if (pairs_fit(g, f)) {
      run_pairs<kQuads, kRows, kStride>(g, f, t, p, c_begin, c_end, scratch);
      return;
    }
  }
  const int32_t x_zp = p.x_zero_point + (p.x_signed ? 128 : 0);
  const __m512i fill = _mm512_set1_epi8(static_cast<char>(x_zp));
  const __m512i flip = _mm512_set1_epi8(p.x_signed ? static_cast<char>(0x80) : 0);
  const RequantAvx512 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
  uint8_t* plane = scratch;
  uint8_t* out = scratch + plane_alloc(f);
  for (int64_t c = c_begin; c < c_end; ++c) {
    pad_plane(g, f, p.x + c * in_plane, fill, flip, plane);
    t.offset = _mm512_set1_epi32(prepare_channel<kQuads>(g, p, x_zp, c, t.quads));
    walk<kQuads, kRows, kStride>(g, f, t, rq, p.multiplier[c], plane, out, p.y + c * out_plane);
  }
}

}  // namespace

bool conv_int8_depthwise_vbmi_supported(const ConvGeometry2d& g) {
  return g.oh > 0 && g.ow > 0 && g.kw <= 4 * kMaxQuads && g.kh * g.kw <= 64 && g.sh >= 1 && g.sw >= 1 &&
         g.dh >= 1 && g.dw >= 1 && (kLanes - 1) * g.sw + (g.kw - 1) * g.dw < 64;
}

size_t conv_int8_depthwise_vbmi_scratch(const ConvGeometry2d& g) {
  const PermutePlane f = permute_plane(g);
  return static_cast<size_t>(std::max(plane_alloc(f) + out_bytes(f), pair_bytes(g, f)));
}

void conv_int8_depthwise_vbmi(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                              int64_t c_end, uint8_t* scratch) {
  const PermutePlane f = permute_plane(g);
  Taps t;
  t.rows = g.kh;
  for (int64_t ky = 0; ky < g.kh; ++ky) t.row_at[ky] = ky * g.dh * f.width;
  // Byte r of lane j in quad q: j * SW + (4q + r) * DW, or j * SW past KW (weight 0 there).
  const __m512i lane_start =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int32_t>(g.sw * 0x01010101)));
  const int64_t quads = (g.kw + 3) / 4;
  for (int64_t q = 0; q < quads; ++q) {
    uint32_t taps = 0;
    for (int64_t r = 0; r < 4; ++r)
      if (4 * q + r < g.kw) taps |= static_cast<uint32_t>((4 * q + r) * g.dw) << (8 * r);
    t.index[q] = _mm512_add_epi8(lane_start, _mm512_set1_epi32(static_cast<int32_t>(taps)));
  }
  // Row groups for MobileNet's and EfficientNet's kernels, blocks one by one for the rest.
  using Run = void (*)(const ConvGeometry2d&, const PermutePlane&, Taps&, const DepthwiseInt8Channels&, int64_t,
                       int64_t, uint8_t*);
  Run run = quads == 1 ? run_channels<1, 0, 0> : run_channels<2, 0, 0>;
  const bool grouped = g.sh == g.sw && g.sh <= 2 && g.dh == 1 && g.dw == 1;
  if (grouped && quads == 1 && g.kh == 3) run = g.sh == 1 ? run_channels<1, 3, 1> : run_channels<1, 3, 2>;
  if (grouped && quads == 2 && g.kh == 5) run = g.sh == 1 ? run_channels<2, 5, 1> : run_channels<2, 5, 2>;
  run(g, f, t, p, c_begin, c_end, scratch);
}

}  // namespace ignis::kernels::x86
