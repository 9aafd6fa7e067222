// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the reference transformer kernels (src/kernels/ref/transformer*.cc): rounding
// to a tensor dtype's precision where the ONNX reference rounds, the attention softmax, and the
// per-file registration function that ref::register_transformer calls.
#pragma once

#include <vector>

#include "core/dtype_dispatch.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

// x rounded to the precision of T (identity for double).
template <class T>
double round_to(double x) {
  return static_cast<double>(to_compute(from_compute<T>(x)));
}

using RoundFn = double (*)(double);

// round_to for a float dtype chosen at run time.
RoundFn round_fn(DType t);

// Softmax of `x` in place, rounded by `rp` after each step; a row with no finite maximum (all
// -inf) becomes zeros. The denominator is rounded after every addition when `round_each_add`
// (numpy sums bfloat16 that way; float16 and wider accumulate in float).
void attention_softmax(std::vector<double>& x, RoundFn rp, bool round_each_add);

void register_transformer_recurrent(KernelRegistry& r);  // LinearAttention, CausalConvWithState

}  // namespace ignis::kernels::ref
