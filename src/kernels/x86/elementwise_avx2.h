// SPDX-License-Identifier: Apache-2.0
// Factories of the AVX2 float32 elementwise kernels (elementwise_avx2.cc): the broadcasting
// arithmetic ops and the unary activations. elementwise.cc registers them; the factories run
// only where the planner chose the kernel, i.e. on CPUs with AVX2.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

Result<std::unique_ptr<Kernel>> elementwise_f32_create_add(const KernelInit& init);
Result<std::unique_ptr<Kernel>> elementwise_f32_create_sub(const KernelInit& init);
Result<std::unique_ptr<Kernel>> elementwise_f32_create_mul(const KernelInit& init);
Result<std::unique_ptr<Kernel>> elementwise_f32_create_div(const KernelInit& init);
// Max and Min of two operands; other input counts go to the reference kernel.
Result<std::unique_ptr<Kernel>> elementwise_f32_create_max(const KernelInit& init);
Result<std::unique_ptr<Kernel>> elementwise_f32_create_min(const KernelInit& init);
// Pow by a single-element exponent of 1, 2, 3, -1, -2, 0.5 or -0.5; others go to the reference.
Result<std::unique_ptr<Kernel>> elementwise_f32_create_pow(const KernelInit& init);

Status elementwise_f32_relu(KernelContext& ctx);
Status elementwise_f32_sigmoid(KernelContext& ctx);
Status elementwise_f32_tanh(KernelContext& ctx);
Status elementwise_f32_exp(KernelContext& ctx);
Status elementwise_f32_erf(KernelContext& ctx);
Status elementwise_f32_log(KernelContext& ctx);
Status elementwise_f32_sqrt(KernelContext& ctx);
Status elementwise_f32_abs(KernelContext& ctx);
Status elementwise_f32_neg(KernelContext& ctx);
Status elementwise_f32_reciprocal(KernelContext& ctx);
// Bounds from attributes before opset 11, from the optional scalar inputs from then on.
Status elementwise_f32_clip(KernelContext& ctx);
Status elementwise_f32_leaky_relu(KernelContext& ctx);
// ONNX Gelu-20 and ai.ignis Gelu; `approximate` "tanh" selects the tanh form.
Status elementwise_f32_gelu(KernelContext& ctx);

// The same functions over a plain array in place, on the calling thread (recurrent gates).
void sigmoid_f32_in_place(float* v, int64_t n);
void tanh_f32_in_place(float* v, int64_t n);

}  // namespace ignis::kernels::x86
