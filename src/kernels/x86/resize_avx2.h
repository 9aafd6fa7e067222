// SPDX-License-Identifier: Apache-2.0
// Factories of the AVX2 Resize and Upsample kernels (resize_avx2.cc): float32 4-D NCHW,
// nearest and linear over H and W. nn_resize.cc registers them; the factories run only where
// the planner chose the kernel, i.e. on CPUs with AVX2.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

Result<std::unique_ptr<Kernel>> resize_f32_create(const KernelInit& init);
Result<std::unique_ptr<Kernel>> upsample_f32_create(const KernelInit& init);

}  // namespace ignis::kernels::x86
