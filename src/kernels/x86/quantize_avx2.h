// SPDX-License-Identifier: Apache-2.0
// AVX2 kernels of the quantization ops (quantize_avx2.cc, quantize_linear_avx2.cc,
// quantize_add_avx2.cc, quantize_mul_avx2.cc, quantize_pool_avx2.cc), registered by
// nn_int8.cc and chosen only on CPUs with AVX2.
#pragma once

#include <memory>

#include "kernels/kernel.h"
#include "kernels/qlinear_add.h"
#include "kernels/qlinear_mul.h"

namespace ignis::kernels::x86 {

// DynamicQuantizeLinear (float32 -> uint8, scale, zero point).
Status dynamic_quantize_linear_avx2(KernelContext& ctx);

// ai.ignis DynamicQuantizeRows (float32 -> int8 and one scale per row).
Status dynamic_quantize_rows_avx2(KernelContext& ctx);

// QuantizeLinear (float32 -> uint8 / int8) and DequantizeLinear (uint8 / int8 -> float32),
// per tensor or per axis; other forms run the reference kernel they hold.
Result<std::unique_ptr<Kernel>> create_quantize_linear_avx2(const KernelInit& init);
Result<std::unique_ptr<Kernel>> create_dequantize_linear_avx2(const KernelInit& init);

// com.microsoft QLinearAdd (uint8 / int8) of two inputs of one shape; broadcasting runs the
// reference kernel it holds.
Result<std::unique_ptr<Kernel>> create_qlinear_add_avx2(const KernelInit& init);

// com.microsoft QLinearMul (uint8 / int8) of two inputs of one shape, or one broadcast over
// leading runs of the other (a per-channel gate); other broadcasts run the reference kernel.
Result<std::unique_ptr<Kernel>> create_qlinear_mul_avx2(const KernelInit& init);

// com.microsoft QLinearGlobalAveragePool (uint8 / int8), channels first; channels last runs the
// reference kernel it holds.
Result<std::unique_ptr<Kernel>> create_qlinear_global_average_pool_avx2(const KernelInit& init);

// QLinearAdd of c[begin, end) from a and b of one shape, 16 lanes at a time while 16 remain
// (quantize_add_avx512.cc); returns where it stopped.
int64_t qlinear_add_range_avx512(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end,
                                 const QLinearAddParams& p);

// QLinearMul of c[begin, end) from a and b of one shape, and of c[0, n) from `full` and one
// value of the other operand (centered: its zero point taken off), 16 lanes at a time while 16
// remain (quantize_mul_avx512.cc); each returns where it stopped.
int64_t qlinear_mul_range_avx512(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end,
                                 const QLinearMulParams& p);
int64_t qlinear_mul_run_avx512(const uint8_t* full, int32_t full_zero_point, int32_t one_centered, uint8_t* c,
                               int64_t n, const QLinearMulParams& p);

}  // namespace ignis::kernels::x86
