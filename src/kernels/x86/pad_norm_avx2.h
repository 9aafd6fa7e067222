// SPDX-License-Identifier: Apache-2.0
// AVX2 row primitives of the x86 Pad (pad.cc) and BatchNormalization (nn_norm.cc) kernels,
// float32. Called only where the planner chose those kernels, i.e. on CPUs with AVX2.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// dst[0, n): `fill` in [0, begin) and [begin + count, n), src[0, count) in between.
// 0 <= begin, count and begin + count <= n.
void pad_f32_row_avx2(float* dst, int64_t n, const float* src, int64_t begin, int64_t count, float fill);

// y[i] = x[i] * a + b for i in [0, n), fused multiply-add; x and y may be the same array.
void scale_shift_f32_avx2(const float* x, float* y, int64_t n, float a, float b);

}  // namespace ignis::kernels::x86
