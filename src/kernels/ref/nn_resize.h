// SPDX-License-Identifier: Apache-2.0
// Resize / Upsample parameters of a kernel call, for the reference kernel (nn_resize.cc) and
// the optimized ones that share its coordinate math (core/resize_geometry.h).
#pragma once

#include "core/resize_geometry.h"
#include "kernels/kernel.h"

namespace ignis::kernels::ref {

// Reads scales / sizes / roi from the call's inputs (or Upsample-7's attribute) and computes
// the resize geometry for the call's input shape. Errors as make_resize_params.
Result<ResizeParams> resize_params_of(const KernelContext& ctx, bool is_upsample);

}  // namespace ignis::kernels::ref
