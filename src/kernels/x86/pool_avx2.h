// SPDX-License-Identifier: Apache-2.0
// Factories of the AVX2 pooling kernels (pool_avx2.cc): MaxPool and AveragePool over 1-D and
// 2-D float32 NCHW windows, GlobalAveragePool and GlobalMaxPool, and ai.ignis BlockedMaxPool
// (16-channel blocks). nn_pool.cc registers them;
// the factories run only where the planner chose the kernel, i.e. on CPUs with AVX2.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

Result<std::unique_ptr<Kernel>> pool_f32_create_max(const KernelInit& init);
Result<std::unique_ptr<Kernel>> pool_f32_create_average(const KernelInit& init);
Result<std::unique_ptr<Kernel>> pool_f32_create_global_max(const KernelInit& init);
Result<std::unique_ptr<Kernel>> pool_f32_create_global_average(const KernelInit& init);
Result<std::unique_ptr<Kernel>> pool_f32_create_blocked_max(const KernelInit& init);
// BlockedMaxPool with AVX-512 (pool_blocked_max_avx512.cc), on CPUs with AVX-512F.
Result<std::unique_ptr<Kernel>> pool_f32_create_blocked_max_avx512(const KernelInit& init);

}  // namespace ignis::kernels::x86
