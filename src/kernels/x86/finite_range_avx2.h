// SPDX-License-Identifier: Apache-2.0
// The smallest and largest finite values of a float32 array, eight lanes at a time, for
// calibration (compress/histogram.cc's finite_range runs it where the CPU has AVX2). Minimum
// and maximum do not round, so it returns what the scalar loop returns (+inf / -inf when no
// value is finite).
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

void finite_range_avx2(const float* x, int64_t n, float* min_out, float* max_out);

}  // namespace ignis::kernels::x86
