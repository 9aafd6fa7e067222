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

Status elementwise_f32_relu(KernelContext& ctx);
Status elementwise_f32_sigmoid(KernelContext& ctx);
Status elementwise_f32_tanh(KernelContext& ctx);
Status elementwise_f32_exp(KernelContext& ctx);
Status elementwise_f32_erf(KernelContext& ctx);
// ONNX Gelu-20 and ai.ignis Gelu; `approximate` "tanh" selects the tanh form.
Status elementwise_f32_gelu(KernelContext& ctx);

// The same functions over a plain array in place, on the calling thread (recurrent gates).
void sigmoid_f32_in_place(float* v, int64_t n);
void tanh_f32_in_place(float* v, int64_t n);

}  // namespace ignis::kernels::x86
