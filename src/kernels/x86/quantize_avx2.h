// SPDX-License-Identifier: Apache-2.0
// AVX2 kernels of the quantization ops (quantize_avx2.cc), registered by nn_int8.cc and chosen
// only on CPUs with AVX2.
#pragma once

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

// DynamicQuantizeLinear (float32 -> uint8, scale, zero point).
Status dynamic_quantize_linear_avx2(KernelContext& ctx);

}  // namespace ignis::kernels::x86
