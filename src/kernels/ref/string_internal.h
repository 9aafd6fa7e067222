// SPDX-License-Identifier: Apache-2.0
// Cast's conversions between strings and numbers (string.cc), which the Cast and CastLike
// kernel (elementwise_misc.cc) calls when either side is a string.
#pragma once

#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis::kernels::ref {

// A number or bool tensor into the String tensor `out` of the same shape.
void cast_to_string(const Tensor& in, Tensor& out);
// A String tensor into the number or bool tensor `out`; InvalidArgument naming the element
// when a string is not a number.
Status cast_from_string(const Tensor& in, Tensor& out);

}  // namespace ignis::kernels::ref
