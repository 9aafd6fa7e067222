// SPDX-License-Identifier: Apache-2.0
// Weight packing of the blocked-layout kernels (conv_blocked.h), shared by the AVX2 and AVX-512
// kernels, the zero padding of the direct kernel's input and the Winograd kernel's block sizes: built without instruction-set
// flags, they run on any x86 CPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/conv_blocked.h"

namespace ignis::kernels::x86 {

namespace {
constexpr int64_t kB = kChannelBlock;
}  // namespace

size_t blocked_pointwise_packed_floats(int64_t m, int64_t c) {
  return static_cast<size_t>(pairs_of(m) * channel_blocks(c) * kB * kPairFloats);
}

void blocked_pointwise_pack(const float* w, int64_t m, int64_t c, float* packed) {
  const int64_t cpad = channel_blocks(c) * kB;
  for (int64_t j = 0; j < pairs_of(m); ++j)
    for (int64_t ic = 0; ic < cpad; ++ic)
      for (int64_t o = 0; o < kPairFloats; ++o) {
        const int64_t oc = j * kPairFloats + o;
        *packed++ = oc < m && ic < c ? w[oc * c + ic] : 0.0f;
      }
}

size_t blocked_depthwise_packed_floats(int64_t m, int64_t kh, int64_t kw) {
  return static_cast<size_t>(channel_blocks(m) * kh * kw * kB);
}

void blocked_depthwise_pack(const float* w, int64_t m, int64_t kh, int64_t kw, float* packed) {
  const int64_t taps = kh * kw;
  for (int64_t b = 0; b < channel_blocks(m); ++b)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t l = 0; l < kB; ++l) {
        const int64_t oc = b * kB + l;
        *packed++ = oc < m ? w[oc * taps + t] : 0.0f;
      }
}

bool blocked_depthwise_supported(const ConvGeometry2d& g) { return g.dh >= 1 && g.dw >= 1; }

size_t blocked_plain_packed_floats(int64_t m, int64_t c, int64_t kh, int64_t kw) {
  return static_cast<size_t>(pairs_of(m) * c * kh * kw * kPairFloats);
}

void blocked_plain_pack(const float* w, int64_t m, int64_t c, int64_t kh, int64_t kw, float* packed) {
  const int64_t taps = c * kh * kw;
  for (int64_t j = 0; j < pairs_of(m); ++j)
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t o = 0; o < kPairFloats; ++o) {
        const int64_t oc = j * kPairFloats + o;
        *packed++ = oc < m ? w[oc * taps + t] : 0.0f;
      }
}

void blocked_densify_sub_block_groups(const float* w, int64_t m, int64_t cg, int64_t kh, int64_t kw, float* dense) {
  const int64_t taps = kh * kw;
  for (int64_t o = 0; o < m; ++o)
    for (int64_t l = 0; l < kB; ++l) {
      // Lane l of o's block is input channel o / 16 * 16 + l, in o's group when l / cg == o % 16 / cg.
      const bool own = l / cg == o % kB / cg;
      for (int64_t t = 0; t < taps; ++t) dense[(o * kB + l) * taps + t] = own ? w[(o * cg + l % cg) * taps + t] : 0.0f;
    }
}

void blocked_pad_planes(const ConvGeometry2d& g, const float* x, float* padded, int64_t u0, int64_t u1) {
  const int64_t rows = blocked_padded_rows(g), cols = blocked_padded_cols(g);
  // Input columns [ix0, ix1) land inside the padded row (the right padding may cut some off).
  const int64_t ix1 = std::min(g.iw, cols - g.pw);
  for (int64_t u = u0; u < u1; ++u) {
    const float* src = x + u * g.ih * g.iw * kB;
    float* dst = padded + u * rows * cols * kB;
    for (int64_t r = 0; r < rows; ++r) {
      float* out = dst + r * cols * kB;
      const int64_t iy = r - g.ph;
      if (iy < 0 || iy >= g.ih || ix1 <= 0) {
        std::fill_n(out, cols * kB, 0.0f);
        continue;
      }
      std::fill_n(out, g.pw * kB, 0.0f);
      std::memcpy(out + g.pw * kB, src + iy * g.iw * kB, static_cast<size_t>(ix1 * kB) * sizeof(float));
      std::fill_n(out + (g.pw + ix1) * kB, (cols - g.pw - ix1) * kB, 0.0f);
    }
  }
}

void blocked_subsample_planes(const ConvGeometry2d& g, const float* x, float* y, int64_t u0, int64_t u1) {
  for (int64_t u = u0; u < u1; ++u) {
    const float* src = x + u * g.ih * g.iw * kB;
    float* dst = y + u * g.oh * g.ow * kB;
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        std::memcpy(dst + (oy * g.ow + ox) * kB, src + (oy * g.sh * g.iw + ox * g.sw) * kB, kB * sizeof(float));
  }
}

int64_t blocked_winograd4_block_tiles(int64_t c, int64_t m) {
  constexpr int64_t kPoints = 36, kRows = 8, kBudget = int64_t{2} << 20;
  const int64_t fit = kBudget / (kPoints * 4 * (channel_blocks(c) + channel_blocks(m)) * kB);
  return std::clamp<int64_t>(fit / kRows * kRows, 4 * kRows, 16 * kRows);
}

size_t blocked_winograd4_scratch_floats(int64_t c, int64_t m, int64_t tiles) {
  const int64_t nb = std::min(blocked_winograd4_block_tiles(c, m), tiles);
  const int64_t cpad = channel_blocks(c) * kB, mpad = channel_blocks(m) * kB;
  GemmArgs shape;  // the block's GEMM (B counted as unpacked: an upper bound)
  shape.backend = &gemm_backend_avx512();
  shape.m = nb;
  shape.n = mpad;
  shape.k = cpad;
  const size_t gemm = (gemm_f32_thread_workspace(shape) + 15) / 16 * 16;
  return static_cast<size_t>(36 * nb * (cpad + mpad)) + gemm;
}

}  // namespace ignis::kernels::x86
