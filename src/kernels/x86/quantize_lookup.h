// SPDX-License-Identifier: Apache-2.0
// The vector loops of the x86 QLinearLookup (quantize_lookup.cc). Declarations only: this header
// is included by files built with AVX-512 or AVX2 flags and by plain ones.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// y[i] = table[x[i] ^ flip] for i < n, on AVX-512 VBMI (quantize_lookup_avx512vbmi.cc).
void qlinear_lookup_avx512vbmi(const uint8_t* x, uint8_t flip, const uint8_t* table, uint8_t* y, int64_t n);
// The same 32 bytes at a time on AVX2 (quantize_lookup_avx2.cc).
void qlinear_lookup_avx2(const uint8_t* x, uint8_t flip, const uint8_t* table, uint8_t* y, int64_t n);

}  // namespace ignis::kernels::x86
