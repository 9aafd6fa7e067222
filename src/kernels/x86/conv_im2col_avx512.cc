// SPDX-License-Identifier: Apache-2.0
// im2col packing for the AVX-512 GEMM backend (32-column panels): the AVX2 packer's scheme
// (conv_avx2.cc) with 16-column groups, so one full-line store per group, one load (unit
// stride) or two loads and one two-source permute (stride 2) per 16 columns, and edge
// groups as one masked 16-lane gather.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/conv_avx2.h"

namespace ignis::kernels::x86 {

namespace {

// Input columns x[0], x[2], ..., x[30] from lo = x[0, 16) and hi = x[15, 31): 31 floats
// read, none past the last one used.
inline __m512 even_elements16(__m512 lo, __m512 hi) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(lo, idx, hi);
}

template <int SW>
inline __m512 load_group(const float* x) {
  if constexpr (SW == 1) return _mm512_loadu_ps(x);
  else return even_elements16(_mm512_loadu_ps(x), _mm512_loadu_ps(x + 15));
}

template <int SW>
void pack(const Im2colSource& s, int64_t nr, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  const ConvGeometry2d g = s.g;  // a local copy: stores to dst cannot alias it
  constexpr int64_t kChunkGroups = 32, kTapBlock = 64;
  const int64_t groups_per_panel = nr / 16, chunk = kChunkGroups * 16 / nr * nr;
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Per group of a chunk: output position of lane 0, real lanes, input offset of lane 0,
  // and every lane's output row, column and input offset for the gather (lanes past the
  // block's end get row -2^30, which no tap reads).
  struct Group {
    int64_t y, x, lanes, rel;
    __m512i ly, lx, lrel;
  };
  alignas(64) Group grp[kChunkGroups];
  Im2colPanel pan[kChunkGroups];
  Im2colTapSource taps[kTapBlock];
  const __m512i ow = _mm512_set1_epi32(static_cast<int32_t>(g.ow));
  for (int64_t cc = 0; cc < nc; cc += chunk) {
    const int64_t n = std::min(chunk, nc - cc), panels = (n + nr - 1) / nr;
    int64_t y = (j0 + cc) / g.ow, x = (j0 + cc) % g.ow;
    for (int64_t q = 0; q < panels * groups_per_panel; ++q) {
      Group& G = grp[q];
      G.y = y;
      G.x = x;
      G.lanes = std::clamp<int64_t>(n - 16 * q, 0, 16);
      G.rel = y * g.sh * g.iw + x * SW;
      __m512i lx = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int32_t>(x)), iota);
      __m512i ly = _mm512_set1_epi32(static_cast<int32_t>(y));
      for (;;) {  // lanes past the row's end wrap to the next rows
        const __mmask16 over = _mm512_cmpge_epi32_mask(lx, ow);
        if (over == 0) break;
        lx = _mm512_mask_sub_epi32(lx, over, lx, ow);
        ly = _mm512_mask_add_epi32(ly, over, ly, _mm512_set1_epi32(1));
      }
      const __mmask16 real = static_cast<__mmask16>((1u << G.lanes) - 1u);
      ly = _mm512_mask_blend_epi32(real, _mm512_set1_epi32(-(1 << 30)), ly);
      G.ly = ly;
      G.lx = lx;
      G.lrel = _mm512_add_epi32(_mm512_mullo_epi32(ly, _mm512_set1_epi32(static_cast<int32_t>(g.sh * g.iw))),
                                _mm512_mullo_epi32(lx, _mm512_set1_epi32(static_cast<int32_t>(SW))));
      for (x += 16; x >= g.ow; x -= g.ow) ++y;
    }
    for (int64_t pn = 0; pn < panels; ++pn)
      pan[pn] = Im2colPanel(grp + pn * groups_per_panel, groups_per_panel, 16, g.ow);
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
          if (P.inside(t)) {
            const float* src = s.x + t.base;
            for (int64_t v = 0; v < groups_per_panel; ++v, out += 16) _mm512_storeu_ps(out, load_group<SW>(src + G[v].rel));
            continue;
          }
          for (int64_t v = 0; v < groups_per_panel; ++v, out += 16) {
            const Group& q = G[v];
            __m512 r;
            if (q.lanes == 16 && q.x >= t.lo && q.x + 16 <= t.hi && q.y >= t.ylo && q.y < t.yhi) {
              r = load_group<SW>(s.x + t.base + q.rel);
            } else {
              // Lanes with ylo <= row < yhi and lo <= column < hi; the offsets are taken
              // from the channel plane, and masked-off lanes are not read.
              const __mmask16 m =
                  _mm512_cmpge_epi32_mask(q.ly, _mm512_set1_epi32(static_cast<int32_t>(t.ylo))) &
                  _mm512_cmplt_epi32_mask(q.ly, _mm512_set1_epi32(static_cast<int32_t>(t.yhi))) &
                  _mm512_cmpge_epi32_mask(q.lx, _mm512_set1_epi32(static_cast<int32_t>(t.lo))) &
                  _mm512_cmplt_epi32_mask(q.lx, _mm512_set1_epi32(static_cast<int32_t>(t.hi)));
              const int32_t shift = static_cast<int32_t>(t.iy0 * g.iw + t.off);
              r = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_add_epi32(q.lrel, _mm512_set1_epi32(shift)),
                                           t.xc, 4);
            }
            _mm512_storeu_ps(out, r);
          }
        }
      }
    }
  }
}

}  // namespace

void conv_f32_pack_im2col_avx512(const Im2colSource& s, int64_t nr, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                                 float* dst) {
  if (s.g.sw == 1) return pack<1>(s, nr, p0, kc, j0, nc, dst);
  pack<2>(s, nr, p0, kc, j0, nc, dst);
}

}  // namespace ignis::kernels::x86
