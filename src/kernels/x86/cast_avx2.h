// SPDX-License-Identifier: Apache-2.0
// The vector loop of the x86 Cast kernel (nn_cast.cc), in an AVX2 translation unit
// (cast_avx2.cc).
#pragma once

#include <cstdint>

#include "ignis/dtype.h"

namespace ignis::kernels::x86 {

// out[i] = float(in[i]) for n values of `from` (I32, U8 or I8).
void cast_to_f32_avx2(DType from, const void* in, float* out, int64_t n);

}  // namespace ignis::kernels::x86
