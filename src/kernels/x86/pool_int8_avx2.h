// SPDX-License-Identifier: Apache-2.0
// Factory of the AVX2 uint8 / int8 MaxPool kernel (pool_int8_avx2.cc); nn_pool.cc registers it.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

Result<std::unique_ptr<Kernel>> pool_int8_create_max(const KernelInit& init);

}  // namespace ignis::kernels::x86
