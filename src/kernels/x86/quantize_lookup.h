// SPDX-License-Identifier: Apache-2.0
// The vector loop of the x86 QLinearLookup (quantize_lookup.cc). Declarations only: this header
// is included by a file built with AVX-512 flags and by plain ones.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// y[i] = table[x[i] ^ flip] for i < n, on AVX-512 VBMI (quantize_lookup_avx512vbmi.cc).
void qlinear_lookup_avx512vbmi(const uint8_t* x, uint8_t flip, const uint8_t* table, uint8_t* y, int64_t n);

}  // namespace ignis::kernels::x86
