// SPDX-License-Identifier: Apache-2.0
// ai.ignis BlockedMaxPool with AVX-512 (pool_blocked_max.h has the walk): one 16-lane vector
// per position, and the NaN-ignoring max as a compare into a mask and a masked max, two
// instructions per tap where AVX2's two halves take six.
#include <immintrin.h>

#include <limits>

#include "kernels/x86/pool_avx2.h"
#include "kernels/x86/pool_blocked_max.h"

namespace ignis::kernels::x86 {

namespace {

struct BlockedMaxLanesAvx512 {
  using V = __m512;
  static V nan() { return _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()); }
  // max(acc, x) where x is a number: a NaN tap leaves acc, and a NaN acc (no number yet) takes x.
  static V max(V acc, const float* x) {
    const __m512 v = _mm512_loadu_ps(x);
    const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    // vmaxps returns its second operand when either is NaN: max(acc, v) is v where acc is NaN.
    return _mm512_mask_max_ps(acc, number, acc, v);
  }
  static void store(float* y, V v) { _mm512_storeu_ps(y, v); }
};

}  // namespace

Result<std::unique_ptr<Kernel>> pool_f32_create_blocked_max_avx512(const KernelInit& init) {
  return BlockedMaxPoolKernel<BlockedMaxLanesAvx512>::create(init);
}

}  // namespace ignis::kernels::x86
