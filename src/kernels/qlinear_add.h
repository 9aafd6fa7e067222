// SPDX-License-Identifier: Apache-2.0
// The arithmetic of com.microsoft QLinearAdd, shared by the reference and the x86 kernels so
// that both give the same bytes: c = saturate(round_half_even((a - a_zp) * (a_scale / c_scale) +
// (b - b_zp) * (b_scale / c_scale)) + c_zp) in float32, as onnxruntime computes it. Against the
// QDQ form it replaces (dequantize, add, divide by c_scale) the two ratios round differently, so
// a value may land one step of c away where it lies near a rounding boundary. Multiplying
// instead of dividing per element is what makes the kernel fast; the products and the sum are
// separate statements so that no compiler contracts them into a fused multiply-add.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {

struct QLinearAddParams {
  float a_ratio = 1, b_ratio = 1;  // a_scale / c_scale, b_scale / c_scale
  int32_t a_zero_point = 0, b_zero_point = 0, c_zero_point = 0;
  bool is_signed = false;  // int8 rather than uint8
};

// The scales (inputs 1, 4, 6: one float32 each) and zero points (inputs 2, 5, 7: absent is 0)
// of a QLinearAdd node; shape inference has checked that each has one entry.
inline QLinearAddParams qlinear_add_params(const KernelContext& ctx) {
  QLinearAddParams p;
  p.is_signed = ctx.input(0).dtype() == DType::I8;
  const auto zero_point = [&](int i) -> int32_t {
    if (!ctx.has_input(i)) return 0;
    const Tensor& z = ctx.input(i);
    return z.dtype() == DType::I8 ? static_cast<int32_t>(z.data_as<int8_t>()[0]) : static_cast<int32_t>(z.data_as<uint8_t>()[0]);
  };
  const float c_scale = ctx.input(6).data_as<float>()[0];
  p.a_ratio = ctx.input(1).data_as<float>()[0] / c_scale;
  p.b_ratio = ctx.input(4).data_as<float>()[0] / c_scale;
  p.a_zero_point = zero_point(2);
  p.b_zero_point = zero_point(5);
  p.c_zero_point = zero_point(7);
  return p;
}

// One output value (as int32, within the type's range) from the inputs' values a and b.
inline int32_t qlinear_add_one(int32_t a, int32_t b, const QLinearAddParams& p) {
  const float fa = static_cast<float>(a - p.a_zero_point) * p.a_ratio;
  const float fb = static_cast<float>(b - p.b_zero_point) * p.b_ratio;
  const float sum = fa + fb;
  const float r = std::nearbyint(sum) + static_cast<float>(p.c_zero_point);
  const float lo = p.is_signed ? -128.0f : 0.0f, hi = p.is_signed ? 127.0f : 255.0f;
  return static_cast<int32_t>(!(r >= lo) ? lo : std::min(r, hi));
}

}  // namespace ignis::kernels
