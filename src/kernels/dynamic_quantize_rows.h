// SPDX-License-Identifier: Apache-2.0
// The operands of ai.ignis DynamicQuantizeRows and its arithmetic per row and per element,
// shared by the reference and the x86 kernels so that both give the same bytes:
//   scale = max(max |x_row|, floor) / limit,  y = clamp(round_half_even(x / scale), -limit, limit)
// each step in float32 (a true division), NaN saturating low.
//
// Everything here sits in an unnamed namespace: the x86 file compiles its copy with AVX2 flags,
// and internal linkage keeps the linker from handing that copy to the reference kernel
// (tools/check_isa_linkage.py).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {
namespace {

struct QuantizeRowsCall {
  const float* x = nullptr;
  int8_t* y = nullptr;
  float* scales = nullptr;  // null when the node's scale output is absent
  int64_t rows = 0, k = 0;  // k: the last axis
  float floor = 0.0f, limit = 127.0f;
};

inline QuantizeRowsCall quantize_rows_call(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  QuantizeRowsCall c;
  c.x = x.data_as<float>();
  c.y = ctx.output(0).data_as<int8_t>();
  c.scales = ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
  c.k = x.shape().back();
  c.rows = x.shape().numel(0, x.rank() - 1);
  c.floor = ctx.attrs().get_float("floor", 0.0f);
  c.limit = static_cast<float>(ctx.attrs().get_int("limit", 127));
  return c;
}

// The scale of a row whose largest |x| is max_abs.
inline float row_scale(float max_abs, const QuantizeRowsCall& c) { return std::max(max_abs, c.floor) / c.limit; }

// The code of one element.
inline int8_t row_code(float x, float scale, float limit) {
  const float q = std::nearbyint(x / scale);
  return static_cast<int8_t>(!(q >= -limit) ? -limit : std::min(q, limit));
}

}  // namespace
}  // namespace ignis::kernels
