// SPDX-License-Identifier: Apache-2.0
// Small AVX-512 building blocks shared by the x86 kernel files built with AVX-512 flags.
// Internal linkage on purpose (see gemm_blocked.h).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace ignis::kernels::x86 {
namespace {

// Lanes [lo, hi) of 16.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16);
  hi = std::clamp<int64_t>(hi, lo, 16);
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
}

}  // namespace
}  // namespace ignis::kernels::x86
