// SPDX-License-Identifier: Apache-2.0
// The requantization of com.microsoft QLinearGlobalAveragePool, shared by the reference and the
// x86 kernels so that both give the same bytes. As onnxruntime computes it: from the exact
// integer sum s of a channel's n values, y = saturate(round_half_even((s - n * x_zp) * (x_scale /
// (y_scale * n))) + y_zp) in float32. Against the QDQ form it replaces (dequantize, float mean,
// quantize) the float roundings differ, so a value may land one step of y away where it lies
// near a rounding boundary.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {

struct QLinearGlobalPoolParams {
  float scale = 1;  // x_scale / (y_scale * n)
  int64_t size = 1;  // n, the values per channel
  int32_t x_zero_point = 0, y_zero_point = 0;
  bool is_signed = false;  // int8 rather than uint8
};

// The parameters of a QLinearGlobalAveragePool node (scales: inputs 1 and 3; zero points: 2 and
// 4, absent is 0) for channels of `size` values; shape inference checked one entry each.
inline QLinearGlobalPoolParams qlinear_global_pool_params(const KernelContext& ctx, int64_t size) {
  const auto zero_point = [&](int i) -> int32_t {
    if (!ctx.has_input(i)) return 0;
    const Tensor& z = ctx.input(i);
    return z.dtype() == DType::I8 ? static_cast<int32_t>(z.data_as<int8_t>()[0]) : static_cast<int32_t>(z.data_as<uint8_t>()[0]);
  };
  QLinearGlobalPoolParams p;
  p.size = size;
  p.scale = ctx.input(1).data_as<float>()[0] / (ctx.input(3).data_as<float>()[0] * static_cast<float>(size));
  p.x_zero_point = zero_point(2);
  p.y_zero_point = zero_point(4);
  p.is_signed = ctx.input(0).dtype() == DType::I8;
  return p;
}

// One output value (as int32, within the type's range) from a channel's sum.
inline int32_t qlinear_average_one(int64_t sum, const QLinearGlobalPoolParams& p) {
  const float v = static_cast<float>(sum - p.size * p.x_zero_point) * p.scale;
  const float r = std::nearbyint(v) + static_cast<float>(p.y_zero_point);
  const float lo = p.is_signed ? -128.0f : 0.0f, hi = p.is_signed ? 127.0f : 255.0f;
  return static_cast<int32_t>(!(r >= lo) ? lo : std::min(r, hi));
}

}  // namespace ignis::kernels
