// SPDX-License-Identifier: Apache-2.0
// The AVX2 bodies of the x86 Reduce* kernels (reduce_avx2.cc); reduce.cc registers the
// kernels and calls these only where AVX2 is available.
#pragma once

#include <cstdint>

#include "core/thread_pool.h"

namespace ignis::kernels::x86 {

enum class ReduceOp { Sum, Mean, Max, Min, SumSquare, L2 };

// y[r] = op over x[r * n + j], j < n, for r < rows (the reduced axes innermost). n >= 1.
void reduce_rows_f32_avx2(ReduceOp op, const float* x, float* y, int64_t rows, int64_t n, ThreadPool* pool);

// y[o * n + j] = op over x[(o * m + i) * n + j], i < m, for o < outer, j < n (the reduced axes
// between kept ones). m >= 1.
void reduce_columns_f32_avx2(ReduceOp op, const float* x, float* y, int64_t outer, int64_t m, int64_t n,
                             ThreadPool* pool);

}  // namespace ignis::kernels::x86
