// SPDX-License-Identifier: Apache-2.0
// The extents of one ai.ignis Attention call (docs/ops_ai_ignis.md), read the same way by
// every Attention kernel: Q [B, Sq, H*D], K [B, Sk, H*D], V [B, Sk, H*Dv], already validated
// by shape inference.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {

struct AttentionShape {
  int64_t batch, sq, sk, heads, d, dv;
  float scale;  // the `scale` attribute, 1 / sqrt(D) by default
};

inline AttentionShape attention_shape(const KernelContext& ctx) {
  const Tensor& q = ctx.input(0);
  const Tensor& v = ctx.input(2);
  const int64_t heads = ctx.attrs().get_int("num_heads", 1);
  const int64_t d = q.dim(2) / heads;
  return {.batch = q.dim(0),
          .sq = q.dim(1),
          .sk = ctx.input(1).dim(1),
          .heads = heads,
          .d = d,
          .dv = v.dim(2) / heads,
          .scale = ctx.attrs().get_float("scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))))};
}

}  // namespace ignis::kernels
