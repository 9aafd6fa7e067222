// SPDX-License-Identifier: Apache-2.0
// Matrix-vector product in float32 with AVX2/FMA (gemv_avx2.cc), for the recurrent ops' step
// at batch 1, where a GEMM register tile would be mostly padding and one accumulator chain
// per tile bounds the speed by FMA latency.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// y[i] = a[i, 0:k] · x for i < rows; `a` row-major with leading dimension lda. Requires AVX2.
void gemv_f32_avx2(const float* a, int64_t lda, int64_t rows, int64_t k, const float* x, float* y);

}  // namespace ignis::kernels::x86
