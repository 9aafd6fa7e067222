// SPDX-License-Identifier: Apache-2.0
// Block grids, round-to-nearest codes and MatMulNBits packing (see int4_weights.h).
#include "compress/int4_weights.h"

namespace ignis::compress {

namespace {

// Narrowed ranges tried per block end: 1 - 0.05 a for a < 8 (down to 65% of the range).
constexpr int kShrinkSteps = 8;
constexpr float kShrinkStep = 0.05f;

// The grid over [lo, hi] (lo <= 0 <= hi): scale (hi - lo) / 15, zero point round(-lo / scale).
Int4Grid grid_of(float lo, float hi) {
  Int4Grid g;
  g.scale = hi > lo ? (hi - lo) / 15.0f : 1.0f;
  g.zero_point = static_cast<int>(std::clamp(std::nearbyint(-lo / g.scale), 0.0f, 15.0f));
  return g;
}

double squared_error(const float* x, int64_t stride, int64_t count, const Int4Grid& g) {
  double e = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const float v = x[i * stride];
    const double d = static_cast<double>(v) - static_cast<double>(int4_value(int4_code(v, g), g));
    e += d * d;
  }
  return e;
}

}  // namespace

// Clipping a rare outlier buys a finer step for every other value, so the narrowed ranges
// compete with the full one on the block's squared error.
Int4Grid int4_block_grid(const float* x, int64_t stride, int64_t count) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    lo = std::min(lo, x[i * stride]);
    hi = std::max(hi, x[i * stride]);
  }
  Int4Grid best = grid_of(lo, hi);
  double best_error = squared_error(x, stride, count, best);
  for (int a = 0; a < kShrinkSteps; ++a) {
    for (int b = 0; b < kShrinkSteps; ++b) {
      if (a == 0 && b == 0) continue;
      const Int4Grid g = grid_of(lo * (1.0f - kShrinkStep * static_cast<float>(a)),
                                 hi * (1.0f - kShrinkStep * static_cast<float>(b)));
      const double e = squared_error(x, stride, count, g);
      if (e < best_error) {
        best_error = e;
        best = g;
      }
    }
  }
  return best;
}

Int4Codes Int4Codes::sized(int64_t k, int64_t n, int64_t block) {
  Int4Codes c;
  c.k = k;
  c.n = n;
  c.block = block;
  c.codes.resize(static_cast<size_t>(k * n));
  c.grids.resize(static_cast<size_t>(n * c.blocks()));
  return c;
}

Int4Codes int4_round_to_nearest(const Tensor& w, int64_t block) {
  Int4Codes c = Int4Codes::sized(w.dim(0), w.dim(1), block);
  const float* x = w.data_as<float>();
  for (int64_t col = 0; col < c.n; ++col) {
    for (int64_t b = 0; b < c.blocks(); ++b) {
      const int64_t k0 = b * block, k1 = std::min(c.k, k0 + block);
      const Int4Grid g = int4_block_grid(x + k0 * c.n + col, c.n, k1 - k0);
      c.grids[static_cast<size_t>(col * c.blocks() + b)] = g;
      for (int64_t i = k0; i < k1; ++i)
        c.codes[static_cast<size_t>(i * c.n + col)] = static_cast<uint8_t>(int4_code(x[i * c.n + col], g));
    }
  }
  return c;
}

// Depths past K (a partial last block) get code z, so they dequantize to 0.
Int4Weight int4_pack(const Int4Codes& c, const Tensor& w) {
  const int64_t blocks = c.blocks(), zp_row = (blocks + 1) / 2, half = c.block / 2;
  Int4Weight out;
  out.codes = Tensor::zeros(DType::U8, Shape{c.n, blocks, half});
  out.scales = Tensor::empty(DType::F32, Shape{c.n * blocks});
  out.zero_points = Tensor::zeros(DType::U8, Shape{c.n * zp_row});
  const float* x = w.data_as<float>();
  uint8_t* codes = out.codes.data_as<uint8_t>();
  uint8_t* zps = out.zero_points.data_as<uint8_t>();
  float* scales = out.scales.data_as<float>();
  for (int64_t col = 0; col < c.n; ++col) {
    for (int64_t b = 0; b < blocks; ++b) {
      const Int4Grid& g = c.grids[static_cast<size_t>(col * blocks + b)];
      scales[col * blocks + b] = g.scale;
      zps[col * zp_row + b / 2] |= static_cast<uint8_t>(b % 2 == 0 ? g.zero_point : g.zero_point << 4);
      uint8_t* blob = codes + (col * blocks + b) * half;
      for (int64_t i = 0; i < c.block; ++i) {
        const int64_t row = b * c.block + i;
        int q = g.zero_point;
        if (row < c.k) {
          q = c.codes[static_cast<size_t>(row * c.n + col)];
          const float v = x[row * c.n + col];
          out.max_abs = std::max(out.max_abs, std::fabs(v));
          out.max_abs_error = std::max(out.max_abs_error, std::fabs(v - int4_value(q, g)));
          out.zeros += q == g.zero_point;
        }
        blob[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? q : q << 4);
      }
    }
  }
  return out;
}

}  // namespace ignis::compress
