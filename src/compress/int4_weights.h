// SPDX-License-Identifier: Apache-2.0
// The 4-bit block scheme of `ignis quantize --mode int4` (MatMulNBits): choosing each block's
// grid, coding values on it, and packing codes and zero points into MatMulNBits' layout. Both
// the round-to-nearest quantizer and the calibrated one (gptq.h) produce Int4Codes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ignis/tensor.h"

namespace ignis::compress {

// One block's grid: w ~= (q - zero_point) * scale for codes q in [0, 15].
struct Int4Grid {
  float scale = 1.0f;
  int zero_point = 0;
};

// The code of `v` on `g`: clamp(round(v / scale) + zero_point, 0, 15), in float32 as written.
inline int int4_code(float v, const Int4Grid& g) {
  return static_cast<int>(std::clamp(std::nearbyint(v / g.scale) + static_cast<float>(g.zero_point), 0.0f, 15.0f));
}

// The value code `q` stands for, in float32 as MatMulNBits dequantizes it.
inline float int4_value(int q, const Int4Grid& g) { return static_cast<float>(q - g.zero_point) * g.scale; }

// The grid of the `count` values x[0], x[stride], ...: range [lo, hi] = [min(0, min x),
// max(0, max x)], each end possibly narrowed toward 0 where that leaves less squared error,
// scale (hi - lo) / 15 and zero point round(-lo / scale).
Int4Grid int4_block_grid(const float* x, int64_t stride, int64_t count);

// The 4-bit form of a weight W [K, N]: one code per weight (W's layout) and one grid per
// block of `block` depths of each column (grids[col * blocks + b]; the last block may be partial).
struct Int4Codes {
  int64_t k = 0, n = 0, block = 0;
  std::vector<uint8_t> codes;  // [K * N], values in [0, 15]
  std::vector<Int4Grid> grids; // [N * ceil(K / block)]
  // Codes and grids sized for W [k, n] (values still 0).
  static Int4Codes sized(int64_t k, int64_t n, int64_t block);
  int64_t blocks() const { return (k + block - 1) / block; }
  const Int4Grid& grid(int64_t row, int64_t col) const { return grids[static_cast<size_t>(col * blocks() + row / block)]; }
  float value(int64_t row, int64_t col) const {
    return int4_value(codes[static_cast<size_t>(row * n + col)], grid(row, col));
  }
};

// Each block's grid from int4_block_grid and each weight rounded to its nearest code.
Int4Codes int4_round_to_nearest(const Tensor& w, int64_t block);

// MatMulNBits' initializers for `c` (codes of float32 weight `w` [K, N]) and what they change.
struct Int4Weight {
  Tensor codes;        // uint8 [N, blocks, block / 2], two codes per byte, low nibble first
  Tensor scales;       // float32 [N * blocks]
  Tensor zero_points;  // uint8 [N * ceil(blocks / 2)], packed as the codes
  float max_abs = 0.0f, max_abs_error = 0.0f;
  int64_t zeros = 0;  // weights that dequantize to 0
};
Int4Weight int4_pack(const Int4Codes& c, const Tensor& w);

}  // namespace ignis::compress
