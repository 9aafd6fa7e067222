// SPDX-License-Identifier: Apache-2.0
// AVX2 kernels of the quantization ops (quantize_avx2.cc, quantize_linear_avx2.cc), registered
// by nn_int8.cc and chosen only on CPUs with AVX2.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

// DynamicQuantizeLinear (float32 -> uint8, scale, zero point).
Status dynamic_quantize_linear_avx2(KernelContext& ctx);

// QuantizeLinear (float32 -> uint8 / int8) and DequantizeLinear (uint8 / int8 -> float32),
// per tensor or per axis; other forms run the reference kernel they hold.
Result<std::unique_ptr<Kernel>> create_quantize_linear_avx2(const KernelInit& init);
Result<std::unique_ptr<Kernel>> create_dequantize_linear_avx2(const KernelInit& init);

}  // namespace ignis::kernels::x86
