// SPDX-License-Identifier: Apache-2.0
// The arithmetic of com.microsoft QLinearMul, shared by the reference and the x86 kernels so
// that both give the same bytes: c = saturate(round_half_even(float((a - a_zp) * (b - b_zp)) *
// ratio) + c_zp) with ratio = a_scale * b_scale / c_scale in float32. The integer product is
// exact (|a - a_zp| * |b - b_zp| <= 255 * 255 < 2^24, so its float is too), which lets a kernel
// that multiplies a whole plane by one b compute it in the same order. Against the QDQ form it
// replaces (dequantize both, multiply, divide by c_scale) a value may land one step of c away
// where it lies near a rounding boundary.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {

struct QLinearMulParams {
  float ratio = 1;  // a_scale * b_scale / c_scale
  int32_t a_zero_point = 0, b_zero_point = 0, c_zero_point = 0;
  bool is_signed = false;  // int8 rather than uint8
};

// The scales (inputs 1, 4, 6: one float32 each) and zero points (inputs 2, 5, 7: absent is 0)
// of a QLinearMul node; shape inference has checked that each has one entry.
inline QLinearMulParams qlinear_mul_params(const KernelContext& ctx) {
  QLinearMulParams p;
  p.is_signed = ctx.input(0).dtype() == DType::I8;
  const auto zero_point = [&](int i) -> int32_t {
    if (!ctx.has_input(i)) return 0;
    const Tensor& z = ctx.input(i);
    return z.dtype() == DType::I8 ? static_cast<int32_t>(z.data_as<int8_t>()[0]) : static_cast<int32_t>(z.data_as<uint8_t>()[0]);
  };
  const float ab = ctx.input(1).data_as<float>()[0] * ctx.input(4).data_as<float>()[0];
  p.ratio = ab / ctx.input(6).data_as<float>()[0];
  p.a_zero_point = zero_point(2);
  p.b_zero_point = zero_point(5);
  p.c_zero_point = zero_point(7);
  return p;
}

// One output value (as int32, within the type's range) from the inputs' values a and b.
inline int32_t qlinear_mul_one(int32_t a, int32_t b, const QLinearMulParams& p) {
  const float product = static_cast<float>((a - p.a_zero_point) * (b - p.b_zero_point));
  const float scaled = product * p.ratio;
  const float r = std::nearbyint(scaled) + static_cast<float>(p.c_zero_point);
  const float lo = p.is_signed ? -128.0f : 0.0f, hi = p.is_signed ? 127.0f : 255.0f;
  return static_cast<int32_t>(!(r >= lo) ? lo : std::min(r, hi));
}

}  // namespace ignis::kernels
