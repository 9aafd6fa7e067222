// SPDX-License-Identifier: Apache-2.0
// AVX2 im2col packing and direct depthwise convolution.
//
// im2col packing: the GEMM asks for a (kc x nc) block of the virtual im2col matrix in its
// backend's panel layout (24 or 32 columns). Row p is one (channel, ky, kx) tap; its columns
// are output positions, which run along output rows. The block is produced in groups of 8
// columns, in registers, each stored into its panel with one aligned full store (no row
// buffer: reloading rows written by unaligned or masked stores stalls, as neither forwards
// to a wider load). Panels are written one after another, tap by tap. A group lying in one
// output row and inside the input is one load (unit stride) or two loads whose even
// elements a shuffle and a permute collect (stride 2); the other groups (padding edges,
// groups running into the next output row, strides above 2, the block's end) are one masked
// gather from per-lane offsets computed once per block.
// Measured packing alone at 1 thread, 32-column panels (loaded machine, best of 20), against
// building each row in a stack buffer (stride 2 copied one float at a time) and dealing it
// out to the panels: 3x3/2 stem 3x224x224 182 -> 89 us, 7x7/2 stem 1026 -> 480 us,
// 3x3/2 128x56x56 621 -> 365 us, 1x1/2 256x56x56 172 -> 130 us, 3x3/1 64x56x56 629 -> 477 us,
// 3x3/1 128x28x28 346 -> 354 us. The AVX-512 backend's 32-column panels use the same scheme
// in 16-column groups (conv_im2col_avx512.cc), another 1.4-1.6x on each of these shapes
// (89 -> 63, 480 -> 322, 365 -> 247, 130 -> 101, 477 -> 342, 354 -> 227 us). For the Cin = 3
// stems the tile, not the packing, then dominates the node.
//
// Depthwise: one channel plane at a time. The input plane is first copied into scratch with
// its padding materialized (and, for stride 2, split into even and odd columns), so the
// inner loop reads every tap with plain unaligned loads and no bounds checks. The output is
// covered by strips of R rows x V 8-wide vectors (R * V <= 8 independent accumulators, for
// the FMA latency): column blocks of up to four vectors, two rows at a time, and narrow
// planes (7x7, 14x14) four to eight rows at a time. Each weight is broadcast once per strip
// and used R * V times.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }


// Lanes [a, b) set (0 <= a <= b <= 8).
inline __m256i lane_range(int64_t a, int64_t b) {
  return _mm256_andnot_si256(lane_mask(static_cast<int>(a)), lane_mask(static_cast<int>(b)));
}

// Input columns x[0], x[2], ..., x[14] (15 floats read, none past the last one used): lo
// holds x[0, 8) (lanes 0..3 take its even elements), hi holds x[7, 15) (lanes 4..7 take its
// odd elements). Per 128-bit half the shuffle takes lo's elements 0, 2 and hi's 1, 3; the
// permute orders the four pairs.
inline __m256 even_elements(__m256 lo, __m256 hi) {
  const __m256 mixed = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
}

// Lane L = output column ox + L of output row oy for lanes [l0, l1), zero elsewhere
// (0 <= l0 < l1 <= 8; ox may be negative: only the lanes in [l0, l1) are real columns).
// Masked loads: lanes outside the input row are never read.
inline __m256 im2col_piece(const ConvGeometry2d& g, const Im2colTapSource& t, int64_t oy, int64_t ox, int64_t l0,
                           int64_t l1) {
  const int64_t iy = oy * g.sh + t.iy0;
  if (iy < 0 || iy >= g.ih) return _mm256_setzero_ps();
  // Lanes reading inside the input row.
  const int64_t a = std::max(l0, t.lo - ox), b = std::min(l1, t.hi - ox);
  if (a >= b) return _mm256_setzero_ps();
  const float* xrow = t.xc + iy * g.iw;
  // Input column of lane 0 (may lie outside the row; masked-off lanes are not touched).
  const int64_t x0 = ox * g.sw + t.off;
  if (g.sw == 1) return _mm256_maskload_ps(xrow + x0, lane_range(a, b));
  if (g.sw == 2) {
    const __m256i even = _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
    const __m256i lo_mask = _mm256_and_si256(even, lane_range(std::min<int64_t>(2 * a, 8), std::min<int64_t>(2 * b, 8)));
    const __m256i hi_mask = _mm256_andnot_si256(
        even, lane_range(std::clamp<int64_t>(2 * a - 7, 0, 8), std::clamp<int64_t>(2 * b - 7, 0, 8)));
    return even_elements(_mm256_maskload_ps(xrow + x0, lo_mask), _mm256_maskload_ps(xrow + x0 + 7, hi_mask));
  }
  alignas(32) float v[8] = {};
  for (int64_t lane = a; lane < b; ++lane) v[lane] = xrow[x0 + lane * g.sw];
  return _mm256_load_ps(v);
}

// Columns [c, c + 8) of the block (output position (oy, ox) at lane 0), any geometry: lanes
// past `lanes` (the block's end) are zero, and the group may run over several output rows.
inline __m256 im2col_group(const ConvGeometry2d& g, const Im2colTapSource& t, int64_t oy, int64_t ox, int64_t lanes) {
  if (lanes <= 0) return _mm256_setzero_ps();
  __m256 r = im2col_piece(g, t, oy, ox, 0, std::min(lanes, g.ow - ox));
  for (int64_t l = g.ow - ox, y = oy + 1; l < lanes; l += g.ow, ++y)
    r = _mm256_or_ps(r, im2col_piece(g, t, y, -l, l, std::min(lanes, l + g.ow)));
  return r;
}

// The packer for column stride SW (1, 2, or 0 for any). Panel by panel, so the block is
// written sequentially, and within a panel tap by tap. Where every group of the panel lies
// in one output row and, for this tap, inside the input (most taps of most panels), the
// groups are plain loads from precomputed offsets. Otherwise each group is checked: whole
// groups inside the input are loaded directly, and the others (padding edges, row
// crossings, the block's end) are one masked gather from per-lane offsets precomputed for
// the panel, the mask from the lanes' output rows and columns against the tap's valid
// ranges (or, when `gather` is false because offsets could overflow 32 bits,
// im2col_group). Measured (packing alone, see the top of the file): testing each group on
// its own in every panel took 2.5 ns per group on the stems against 1.7 with the panel-wide
// test, and building the edge and crossing groups from masked loads per row piece instead
// of the gather took 3x3/2 128x56x56 from 365 to 452 us.
template <int SW>
void pack_im2col(const Im2colSource& s, int64_t nr, int64_t p0, int64_t kc, int64_t j0, int64_t nc, bool gather,
                 float* dst) {
  const ConvGeometry2d g = s.g;  // a local copy: stores to dst cannot alias it
  constexpr int64_t kChunkGroups = 64, kTapBlock = 64;
  const int64_t groups_per_panel = nr / 8, chunk = kChunkGroups * 8 / nr * nr;
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Per group of a chunk: output position of lane 0, real lanes, input offset of lane 0
  // and, for the gather, every lane's output row, column and input offset (lanes past the
  // block's end get row -2^30, which no tap reads).
  struct Group {
    int64_t y, x, lanes, rel;
    __m256i ly, lx, lrel;
  };
  alignas(32) Group grp[kChunkGroups];
  Im2colPanel pan[kChunkGroups];
  Im2colTapSource taps[kTapBlock];
  for (int64_t cc = 0; cc < nc; cc += chunk) {
    const int64_t n = std::min(chunk, nc - cc), panels = (n + nr - 1) / nr;
    int64_t y = (j0 + cc) / g.ow, x = (j0 + cc) % g.ow;
    for (int64_t q = 0; q < panels * groups_per_panel; ++q) {
      Group& G = grp[q];
      G.y = y;
      G.x = x;
      G.lanes = std::clamp<int64_t>(n - 8 * q, 0, 8);
      G.rel = y * g.sh * g.iw + x * SW;
      if (gather) {
        __m256i lx = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int32_t>(x)), iota);
        __m256i ly = _mm256_set1_epi32(static_cast<int32_t>(y));
        const __m256i ow = _mm256_set1_epi32(static_cast<int32_t>(g.ow)), one = _mm256_set1_epi32(1);
        for (;;) {  // lanes past the row's end wrap to the next rows
          const __m256i over = _mm256_cmpgt_epi32(lx, _mm256_sub_epi32(ow, one));
          if (_mm256_testz_si256(over, over)) break;
          lx = _mm256_sub_epi32(lx, _mm256_and_si256(over, ow));
          ly = _mm256_add_epi32(ly, _mm256_and_si256(over, one));
        }
        ly = _mm256_blendv_epi8(_mm256_set1_epi32(-(1 << 30)), ly,
                                _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(G.lanes)), iota));
        G.ly = ly;
        G.lx = lx;
        G.lrel = _mm256_add_epi32(_mm256_mullo_epi32(ly, _mm256_set1_epi32(static_cast<int32_t>(g.sh * g.iw))),
                                  _mm256_mullo_epi32(lx, _mm256_set1_epi32(static_cast<int32_t>(g.sw))));
      }
      for (x += 8; x >= g.ow; x -= g.ow) ++y;
    }
    for (int64_t pn = 0; pn < panels; ++pn)
      pan[pn] = Im2colPanel(grp + pn * groups_per_panel, groups_per_panel, 8, g.ow);
    Im2colTap tap(g, p0);
    for (int64_t pb = 0; pb < kc; pb += kTapBlock) {
      const int64_t nt = std::min(kTapBlock, kc - pb);
      for (int64_t i = 0; i < nt; ++i, tap.next(g)) taps[i] = Im2colTapSource(s, tap);
      for (int64_t pn = 0; pn < panels; ++pn) {
        const Im2colPanel& P = pan[pn];
        const Group* G = grp + pn * groups_per_panel;
        float* out = dst + (cc + pn * nr) * kc + pb * nr;
        for (int64_t i = 0; i < nt; ++i) {
          const Im2colTapSource& t = taps[i];
          if (SW != 0 && P.inside(t)) {
            const float* src = s.x + t.base;
            for (int64_t v = 0; v < groups_per_panel; ++v, out += 8) {
              const float* xp = src + G[v].rel;
              _mm256_store_ps(out, SW == 1 ? _mm256_loadu_ps(xp)
                                           : even_elements(_mm256_loadu_ps(xp), _mm256_loadu_ps(xp + 7)));
            }
            continue;
          }
          for (int64_t v = 0; v < groups_per_panel; ++v, out += 8) {
            const Group& q = G[v];
            __m256 r;
            if (SW != 0 && q.lanes == 8 && q.x >= t.lo && q.x + 8 <= t.hi && q.y >= t.ylo && q.y < t.yhi) {
              const float* xp = s.x + t.base + q.rel;
              r = SW == 1 ? _mm256_loadu_ps(xp) : even_elements(_mm256_loadu_ps(xp), _mm256_loadu_ps(xp + 7));
            } else if (gather) {
              // Lanes with ylo <= row < yhi and lo <= column < hi; the offsets are taken
              // from the channel plane, and masked-off lanes are not read.
              const __m256i m = _mm256_andnot_si256(
                  _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(t.ylo)), q.ly),
                                  _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(t.lo)), q.lx)),
                  _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(t.yhi)), q.ly),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(t.hi)), q.lx)));
              const int32_t shift = static_cast<int32_t>(t.iy0 * g.iw + t.off);
              r = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), t.xc, _mm256_add_epi32(q.lrel, _mm256_set1_epi32(shift)),
                                           _mm256_castsi256_ps(m), 4);
            } else {
              r = im2col_group(g, t, q.y, q.x, q.lanes);
            }
            _mm256_store_ps(out, r);
          }
        }
      }
    }
  }
}

// The packer for small outputs (rows narrower than 16 positions, where nearly every group of
// 8 runs into the next output row and so took the masked gather with per-tap bounds tests):
// the block's channel planes are first copied with their padding materialized, so no tap
// needs a bounds test. At unit column stride a group of 8 lanes is then at most 3 runs of
// consecutive floats (one per output row it touches): as many unaligned loads, blended;
// other strides (or narrower rows) gather each group with offsets fixed for the whole block
// (the block's last group masked). Measured at 1 thread: the digits CNN's 16->32
// convolution on a 4x4 image took 6 us with the bounds-tested gathers (64% packing), 4.2 us
// with padded-plane gathers, 4.1 us with the runs (copying each run with its own loads and
// stores instead was slower than gathering); 512->512 on 7x7 packed in 12.7%, 7.6% and 7.1%
// of the node. False, with nothing written, when the padded planes exceed the stack buffer
// or the block has too many positions.
bool pack_im2col_padded(const Im2colSource& s, int64_t width, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                        float* dst) {
  constexpr int64_t kBufFloats = 16384, kMaxGroups = 64;
  const ConvGeometry2d g = s.g;
  const int64_t taps = g.kh * g.kw;
  const int64_t c_first = p0 / taps, channels = (p0 + kc - 1) / taps - c_first + 1;
  const int64_t rows = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;  // padded extent the taps reach
  const int64_t cols = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  const int64_t plane = rows * cols;
  const int64_t panels = (nc + width - 1) / width, groups = panels * (width / 8);
  if (channels * plane > kBufFloats || groups > kMaxGroups) return false;
  // 8 floats of slack before and after the planes for the run loads and the row stores.
  alignas(64) float storage[kBufFloats + 16];
  float* buf = storage + 8;
  for (int64_t c = 0; c < channels; ++c) {
    const float* xc = s.x + (c_first + c) * g.ih * g.iw;
    for (int64_t r = 0; r < rows; ++r) {
      // Whole 8-float stores, the last running up to 7 floats into the next row (written
      // after this one) or the buffer's slack: rows are short, and scalar tails became
      // memset / memcpy calls that cost more than the row.
      float* out = buf + c * plane + r * cols;
      for (int64_t i = 0; i < cols; i += 8) _mm256_storeu_ps(out + i, _mm256_setzero_ps());
      const int64_t iy = r - g.ph;
      if (iy < 0 || iy >= g.ih) continue;
      // Columns [a, b) of the padded row are input columns [a - pw, b - pw); the masked
      // loads read nothing past them, the stores' extra lanes write zeros.
      const int64_t a = std::min(cols, g.pw), b = std::max(a, std::min(cols, g.pw + g.iw));
      const float* src = xc + iy * g.iw + (a - g.pw);
      for (int64_t i = 0; i < b - a; i += 8)
        _mm256_storeu_ps(out + a + i, i + 8 <= b - a ? _mm256_loadu_ps(src + i)
                                                     : _mm256_maskload_ps(src + i, lane_mask(static_cast<int>(b - a - i))));
    }
  }
  // Per group of 8 lanes: its lanes' offsets in a padded plane, and at unit column stride its
  // runs of consecutive offsets (lanes in one output row), at most kMaxRuns: lane L of run r
  // reads base + shift[r] + L, lanes from start[r] on take run r.
  constexpr int kMaxRuns = 3;
  // No default member initializers: the array would be zeroed whole (10 KiB) on every call.
  struct Group {
    int runs;     // 0: gathered
    int64_t out;  // offset of the group's 8 floats in the panels, less p * width
    int64_t shift[kMaxRuns];
    __m256 from[kMaxRuns];
  };
  Group grp[kMaxGroups];
  alignas(32) int32_t offsets[kMaxGroups][8];
  for (int64_t q = 0; q < groups; ++q) {
    int64_t y = (j0 + std::min(q * 8, nc - 1)) / g.ow, x = (j0 + std::min(q * 8, nc - 1)) % g.ow;
    int runs = 0;
    for (int lane = 0; lane < 8; ++lane) {
      const int64_t off = y * g.sh * cols + x * g.sw;
      offsets[q][lane] = static_cast<int32_t>(off);
      const bool real = q * 8 + lane < nc;
      if (real && (lane == 0 || x == 0)) {  // a new run starts at each output row
        if (runs < kMaxRuns) {
          grp[q].shift[runs] = off - lane;
          grp[q].from[runs] = _mm256_castsi256_ps(
              _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(lane - 1)));
        }
        ++runs;
      }
      if (real && ++x == g.ow) {
        x = 0;
        ++y;
      }
    }
    grp[q].runs = g.sw == 1 && runs <= kMaxRuns ? runs : 0;
    grp[q].out = q / (width / 8) * width * kc + q % (width / 8) * 8;  // divided once per block
  }
  const int64_t full = nc / 8;  // groups with 8 real lanes
  const __m256 tail_mask = _mm256_castsi256_ps(lane_mask(static_cast<int>(nc % 8)));
  Im2colTap tap(g, p0);
  for (int64_t p = 0; p < kc; ++p, tap.next(g)) {
    const float* base = buf + (tap.c - c_first) * plane + tap.ky * g.dh * cols + tap.kx * g.dw;
    for (int64_t q = 0; q < groups; ++q) {
      const Group& G = grp[q];
      __m256 v;
      if (q > full || (q == full && nc % 8 == 0)) {
        v = _mm256_setzero_ps();
      } else if (G.runs > 0) {
        // Loads may reach into the buffer's slack around the planes; blended away.
        v = _mm256_loadu_ps(base + G.shift[0]);
        for (int r = 1; r < G.runs; ++r) v = _mm256_blendv_ps(v, _mm256_loadu_ps(base + G.shift[r]), G.from[r]);
        if (q == full) v = _mm256_and_ps(v, tail_mask);
      } else {
        const __m256i off = _mm256_load_si256(reinterpret_cast<const __m256i*>(offsets[q]));
        v = q < full ? _mm256_i32gather_ps(base, off, 4)
                     : _mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, off, tail_mask, 4);
      }
      _mm256_store_ps(dst + G.out + p * width, v);
    }
  }
  return true;
}

}  // namespace

namespace {

// Panels of `width` output positions (a multiple of 8) of rows [p0, p0 + kc): the GEMM's B
// panels (width nr) or, for the transposed formulation, its A panels (width mr).
void pack_im2col_panels(const Im2colSource& s, Isa isa, int64_t width, int64_t p0, int64_t kc, int64_t j0,
                        int64_t nc, float* dst) {
  const ConvGeometry2d& g = s.g;
  if (g.ow < 16 && pack_im2col_padded(s, width, p0, kc, j0, nc, dst)) return;
  const bool gather = im2col_gather_fits(g);
  if (isa == Isa::Avx512 && width % 16 == 0 && gather && g.sw <= 2)
    return conv_f32_pack_im2col_avx512(s, width, p0, kc, j0, nc, dst);
  if (g.sw == 1) return pack_im2col<1>(s, width, p0, kc, j0, nc, gather, dst);
  if (g.sw == 2) return pack_im2col<2>(s, width, p0, kc, j0, nc, gather, dst);
  pack_im2col<0>(s, width, p0, kc, j0, nc, gather, dst);
}

}  // namespace

void conv_f32_pack_im2col(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, float* dst) {
  // nr is a multiple of 8, at most 64.
  pack_im2col_panels(*static_cast<const Im2colSource*>(source), backend.isa, backend.nr, p0, kc, j0, nc, dst);
}

void conv_f32_pack_im2col_rows(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t i0,
                               int64_t mc, float* dst) {
  const Im2colSource& s = *static_cast<const Im2colSource*>(source);
  if (backend.mr % 8 == 0) return pack_im2col_panels(s, backend.isa, backend.mr, p0, kc, i0, mc, dst);
  // 4-row panels (the AVX2 backend): the packers write 8-row panels, so each is packed into a
  // buffer and split into two 4-row panels (rows past mc are zero in both).
  static_assert(kGemmMr == 4, "the split below makes 4-row panels");
  alignas(32) float eight[8 * kGemmKc];
  for (int64_t r = 0; r < mc; r += 8) {
    const int64_t rows = std::min<int64_t>(8, mc - r);
    for (int64_t k0 = 0; k0 < kc; k0 += kGemmKc) {
      const int64_t depth = std::min<int64_t>(kGemmKc, kc - k0);
      // (2 * mr, not a literal 8: inlined with a constant width, GCC 12 reports the packers'
      // group table as maybe uninitialized.)
      pack_im2col_panels(s, backend.isa, 2 * backend.mr, p0 + k0, depth, i0 + r, rows, eight);
      float* lo = dst + r * kc + k0 * 4;
      float* hi = dst + (r + 4) * kc + k0 * 4;
      for (int64_t p = 0; p < depth; ++p) {
        _mm_storeu_ps(lo + p * 4, _mm_load_ps(eight + p * 8));
        if (rows > 4) _mm_storeu_ps(hi + p * 4, _mm_load_ps(eight + p * 8 + 4));
      }
    }
  }
}

// ---- depthwise ---------------------------------------------------------------------------

namespace {

// Layout of the padded copy of one input plane. Stride 1: one plane of `rows` x `width`.
// Stride 2: two planes (even input columns, then odd), each `rows` x `width`, so tap kx of
// output column ox reads plane kx % 2 at column ox + kx / 2.
struct PaddedPlane {
  int64_t rows = 0, width = 0;
  int planes = 1;
};

PaddedPlane padded_layout(const ConvGeometry2d& g) {
  PaddedPlane p;
  p.rows = (g.oh - 1) * g.sh + g.kh;
  const int64_t ow_pad = round_up(g.ow, 8);
  if (g.sw == 1) {
    p.width = round_up(ow_pad + g.kw, 8);
  } else {
    p.planes = 2;
    p.width = round_up(ow_pad + g.kw / 2 + 1, 8);
  }
  return p;
}

void fill_padded(const ConvGeometry2d& g, const PaddedPlane& p, const float* x, float* dst) {
  const int64_t total_cols = p.width * p.planes;  // padded columns covered (2 * width for stride 2)
  for (int64_t r = 0; r < p.rows; ++r) {
    const int64_t iy = r - g.ph;
    const float* xrow = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
    // Padded column c holds input column c - pw; [c_lo, c_hi) are the columns with data.
    const int64_t c_lo = xrow ? std::clamp<int64_t>(g.pw, 0, total_cols) : total_cols;
    const int64_t c_hi = xrow ? std::clamp<int64_t>(g.pw + g.iw, c_lo, total_cols) : total_cols;
    if (p.planes == 1) {
      // Rows are short (tens of floats): inline vector moves beat memcpy/memset calls.
      float* d = dst + r * p.width;
      const __m256 zero = _mm256_setzero_ps();
      for (int64_t c = 0; c < c_lo; c += 8) _mm256_storeu_ps(d + c, zero);  // width is a multiple of 8
      const float* src = xrow ? xrow + (c_lo - g.pw) : nullptr;
      int64_t c = c_lo;
      for (; c + 8 <= c_hi; c += 8) _mm256_storeu_ps(d + c, _mm256_loadu_ps(src + (c - c_lo)));
      if (c < c_hi) {
        const __m256i m = lane_mask(static_cast<int>(c_hi - c));
        _mm256_storeu_ps(d + c, _mm256_maskload_ps(src + (c - c_lo), m));  // zeros past c_hi
        c += 8;
      }
      for (; c < total_cols; c += 8) _mm256_storeu_ps(d + c, zero);
      continue;
    }
    float* even = dst + r * p.width;
    float* odd = dst + (p.rows + r) * p.width;
    int64_t t = 0;
    auto scalar_until = [&](int64_t t_end) {
      for (; t < t_end; ++t) {
        const int64_t ce = 2 * t, co = 2 * t + 1;
        even[t] = ce >= c_lo && ce < c_hi ? xrow[ce - g.pw] : 0.0f;
        odd[t] = co >= c_lo && co < c_hi ? xrow[co - g.pw] : 0.0f;
      }
    };
    // Columns 2t .. 2t + 15 all inside the row: split 16 floats into 8 even and 8 odd.
    const int64_t t_vec = std::min(p.width, (c_lo + 1) / 2);
    scalar_until(t_vec);
    for (; 2 * t + 16 <= c_hi && t + 8 <= p.width; t += 8) {
      const float* src = xrow + (2 * t - g.pw);
      const __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
      const __m256 ev = _mm256_shuffle_ps(a, b, 0x88), od = _mm256_shuffle_ps(a, b, 0xDD);
      _mm256_storeu_ps(even + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
      _mm256_storeu_ps(odd + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), 0xD8)));
    }
    scalar_until(p.width);
  }
}

struct DepthwiseJob {
  const ConvGeometry2d* g;
  const PaddedPlane* p;
  const float* even;  // padded plane (stride 1) or its even columns (stride 2)
  const float* odd;   // odd columns (stride 2)
  const float* w;
  float bias;
  const GemmEpilogue* e;
  const float* residual;  // added before the activation; laid out like y, or null
  float* y;
};

// R output rows x V 8-wide vectors starting at (oy, ox): R * V independent accumulators.
// Taps are visited kernel row by kernel row; each weight is broadcast once per strip.
// KH/KW = 0: kernel extents from the geometry. S: horizontal stride (1 or 2).
template <int KH, int KW, int S, int R, int V>
void depthwise_strip(const DepthwiseJob& j, int64_t oy, int64_t ox) {
  const ConvGeometry2d& g = *j.g;
  const int kh = KH ? KH : static_cast<int>(g.kh);
  const int kw = KW ? KW : static_cast<int>(g.kw);
  const int64_t width = j.p->width;
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(j.bias);
  for (int ky = 0; ky < kh; ++ky) {
    const float* rows_e[R];
    const float* rows_o[R];
    for (int r = 0; r < R; ++r) {
      const int64_t row = (oy + r) * g.sh + ky;
      rows_e[r] = j.even + row * width + ox;
      rows_o[r] = j.odd + row * width + ox;
    }
    for (int kx = 0; kx < kw; ++kx) {
      const __m256 wv = _mm256_broadcast_ss(j.w + ky * kw + kx);
      for (int r = 0; r < R; ++r) {
        // Stride 2: tap kx of output column ox reads plane kx % 2 at column ox + kx / 2.
        const float* src = S == 1 ? rows_e[r] + kx : (kx % 2 == 0 ? rows_e[r] : rows_o[r]) + kx / 2;
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src + 8 * v), acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t at = (oy + r) * g.ow + ox;
    for (int v = 0; v < V; ++v) {
      const int64_t left = g.ow - ox - 8 * v;
      const __m256i mask = lane_mask(static_cast<int>(std::min<int64_t>(left, 8)));
      __m256 out = acc[r][v];
      if (j.residual) {
        const float* z = j.residual + at + 8 * v;
        out = _mm256_add_ps(out, left >= 8 ? _mm256_loadu_ps(z) : _mm256_maskload_ps(z, mask));
      }
      out = activate_avx2(out, *j.e);
      if (left >= 8) _mm256_storeu_ps(j.y + at + 8 * v, out);
      else _mm256_maskstore_ps(j.y + at + 8 * v, mask, out);
    }
  }
}

// Rows [oy, oh) of one column block: strips of R rows, then the leftover rows with R / 2...
template <int KH, int KW, int S, int V, int R>
void depthwise_rows(const DepthwiseJob& j, int64_t oy, int64_t ox) {
  for (; oy + R <= j.g->oh; oy += R) depthwise_strip<KH, KW, S, R, V>(j, oy, ox);
  if constexpr (R > 1) depthwise_rows<KH, KW, S, V, R / 2>(j, oy, ox);
}

// Covers the output plane column block by column block (up to four vectors wide), each
// with strips of R rows so that about eight accumulators are live: a 3x3 tap chain per
// accumulator is nine dependent FMAs, and eight chains keep both FMA ports busy.
template <int KH, int KW, int S>
void depthwise_plane(const DepthwiseJob& j) {
  const int64_t nvec = (j.g->ow + 7) / 8;
  for (int64_t v = 0; v < nvec; v += 4) {
    switch (std::min<int64_t>(4, nvec - v)) {
      case 4: depthwise_rows<KH, KW, S, 4, 2>(j, 0, 8 * v); break;
      case 3: depthwise_rows<KH, KW, S, 3, 2>(j, 0, 8 * v); break;
      case 2: depthwise_rows<KH, KW, S, 2, 4>(j, 0, 8 * v); break;
      default: depthwise_rows<KH, KW, S, 1, 8>(j, 0, 8 * v); break;
    }
  }
}

}  // namespace

bool conv_f32_depthwise_supported(const ConvGeometry2d& g) {
  return g.kh >= 1 && g.kw >= 1 && g.kh <= 7 && g.kw <= 7 && (g.sh == 1 || g.sh == 2) && (g.sw == 1 || g.sw == 2) &&
         g.dh == 1 && g.dw == 1;
}

size_t conv_f32_depthwise_scratch(const ConvGeometry2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const PaddedPlane p = padded_layout(g);
  return static_cast<size_t>(p.rows * p.width * p.planes + 16);
}

void conv_f32_depthwise_plane(const ConvGeometry2d& g, const float* x, const float* w, float bias,
                              const float* residual, const GemmEpilogue& e, float* y, float* scratch) {
  if (g.oh <= 0 || g.ow <= 0) return;
  const PaddedPlane p = padded_layout(g);
  fill_padded(g, p, x, scratch);
  const DepthwiseJob j{&g, &p, scratch, scratch + (p.planes == 2 ? p.rows * p.width : 0), w, bias, &e, residual, y};
  const bool square3 = g.kh == 3 && g.kw == 3, square5 = g.kh == 5 && g.kw == 5;
  if (g.sw == 1) {
    if (square3) return depthwise_plane<3, 3, 1>(j);
    if (square5) return depthwise_plane<5, 5, 1>(j);
    return depthwise_plane<0, 0, 1>(j);
  }
  if (square3) return depthwise_plane<3, 3, 2>(j);
  if (square5) return depthwise_plane<5, 5, 2>(j);
  depthwise_plane<0, 0, 2>(j);
}

}  // namespace ignis::kernels::x86
