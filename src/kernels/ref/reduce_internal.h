// SPDX-License-Identifier: Apache-2.0
// The coalesced view of a Reduce* op's input (reduce.cc), shared with the optimized kernels so
// they resolve axes, keepdims and noop_with_empty_axes exactly as the reference does.
#pragma once

#include <cstdint>

#include "ignis/shape.h"
#include "kernels/kernel.h"

namespace ignis::kernels::ref {

// The input's dims with extent-1 dims dropped and neighbours that are both reduced or both
// kept merged, outermost first, with dense input strides and output strides.
struct ReduceLayout {
  bool noop = false;  // noop_with_empty_axes with empty axes: output = input
  int rank = 0;       // coalesced rank
  int64_t dims[Shape::kMaxRank] = {};
  bool reduced[Shape::kMaxRank] = {};
  int64_t in_strides[Shape::kMaxRank] = {};
  int64_t out_strides[Shape::kMaxRank] = {};  // 0 on reduced dims
  int64_t out_numel = 1;
  int64_t count = 1;  // input elements folded into each output element
};

// Resolves the axes (attribute before `axes_input_since`, the optional input from then on) the
// way shape inference validated them.
ReduceLayout make_reduce_layout(const KernelContext& ctx, int axes_input_since);

}  // namespace ignis::kernels::ref
