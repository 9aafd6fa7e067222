// SPDX-License-Identifier: Apache-2.0
// A depthwise convolution with a 1x1 window, unit strides and no padding is a per-channel
// scale: y = act(w[o] * x + bias[o] + residual), one streaming pass over each plane. Such
// convolutions come from convert_batch_norm_to_conv (a BatchNormalization no convolution
// absorbed, with its Relu fused) where the blocked layout does not take them. The general
// depthwise kernels copy each plane into a padded buffer first (conv_f32_depthwise_plane) or
// transpose channels into lanes (the lanes kernels), which for one tap costs three times a
// BatchNormalization and a Relu together (densenet's 28x28 layers, one thread, Ice Lake with
// the AVX2 kernels: 181 us against 35 + 24). 8 lanes at a time, the last ones masked; AVX2
// suffices on AVX-512 CPUs too, as the pass is bound by memory.
#include <immintrin.h>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

bool conv_f32_depthwise_is_scale(const ConvGeometry2d& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.ih && g.ow == g.iw;
}

void conv_f32_depthwise_scale_avx2(const DepthwisePlanes& d, int64_t plane, int64_t t0, int64_t t1) {
  with_activation(d.act->act, [&]<Activation A>() {
    const ActivationParams256 k(*d.act);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t image = t / d.m, o = t % d.m;
      const float* x = d.x + (image * d.c + o / d.mg) * plane;
      const float* r = d.residual ? d.residual + t * plane : nullptr;
      float* y = d.y + t * plane;
      const __m256 w = _mm256_set1_ps(d.w[o]), b = _mm256_set1_ps(d.bias ? d.bias[o] : 0.0f);
      auto one = [&](__m256 v, const float* ri) {
        v = _mm256_fmadd_ps(v, w, b);
        if (ri) v = _mm256_add_ps(v, _mm256_loadu_ps(ri));
        return activate_avx2<A>(v, k);
      };
      int64_t i = 0;
      for (; i + 8 <= plane; i += 8) _mm256_storeu_ps(y + i, one(_mm256_loadu_ps(x + i), r ? r + i : nullptr));
      if (i < plane) {
        const __m256i m = lane_mask(static_cast<int>(plane - i));
        __m256 v = _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), w, b);
        if (r) v = _mm256_add_ps(v, _mm256_maskload_ps(r + i, m));
        _mm256_maskstore_ps(y + i, m, activate_avx2<A>(v, k));
      }
    }
  });
}

}  // namespace ignis::kernels::x86
