// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the x86 op kernels: per-family registration functions (called from
// registry_x86.cc) and the delegation to reference kernels for configurations the
// optimized code does not cover.
#pragma once

#include <memory>
#include <string_view>

#include "kernels/registry.h"

namespace ignis::kernels::x86 {

void register_nn_gemm(KernelRegistry& r);  // MatMul, Gemm (nn_gemm.cc)
void register_nn_conv(KernelRegistry& r);  // Conv (nn_conv.cc)

// Instantiates the reference kernel of `op_type` (domain ai.onnx, float32, the opset in
// `init`), for optimized kernels that hand some configurations back to it.
Result<std::unique_ptr<Kernel>> make_reference_kernel(std::string_view op_type, const KernelInit& init);

}  // namespace ignis::kernels::x86
