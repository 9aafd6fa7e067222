// SPDX-License-Identifier: Apache-2.0
// The parts of the blocked pointwise tile that the float32 (conv_blocked_avx512.cc) and the
// bfloat16 (conv_blocked_avx512bf16.cc) kernels share: the tile size, the weight prefetch
// distance, and the tile's start (bias) and finish (residual, activation, padded lanes zeroed).
// Internal linkage (see gemm_blocked.h): files built with different ISA flags include it.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kB = kChannelBlock;

// Lanes of output block `block` that hold real channels (m channels in all).
inline __mmask16 block_mask(int64_t block, int64_t m) { return lanes(0, m - block * kB); }

// act(v + residual), the padded lanes zeroed, stored at y.
template <Activation A>
inline void store_out(__m512 v, const float* residual, float* y, __mmask16 real, const ActivationParams512& k) {
  if (residual) v = _mm512_add_ps(v, _mm512_loadu_ps(residual));
  v = activate_avx512<A>(v, k);
  if (real != 0xFFFF) v = _mm512_maskz_mov_ps(real, v);
  _mm512_storeu_ps(y, v);
}

constexpr int kTileP = 12;
// Weights are prefetched kWeightPrefetch floats (16 depth steps, ~200 cycles) ahead: the
// first position tile reads each layer's weights from L3 (a model's weights do not stay in
// L2 between runs), and the hardware prefetcher alone left 1x1 layers on 7x7 images ~2x
// slower than with warm weights (1280x320: 531 -> 356 us cold, 284 warm; one core).
constexpr int64_t kWeightPrefetch = 512;
// A pointwise tile's accumulators start at the bias of its output blocks.
template <int P, int NB>
inline void start_tile(const BlockedConvArgs& a, int64_t pair, __m512 (&acc)[P][NB]) {
  for (int b = 0; b < NB; ++b) {
    const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + pair * kPairFloats + b * kB) : _mm512_setzero_ps();
    for (int p = 0; p < P; ++p) acc[p][b] = bias;
  }
}

// A pointwise tile's sums, with the residual and activation, stored at y (output planes have
// the input's positions).
template <int P, int NB, Activation A>
inline void finish_tile(const BlockedConvArgs& a, int64_t xbs, int64_t pair, const __m512 (&acc)[P][NB],
                        const float* residual, float* y, const ActivationParams512& k) {
  for (int b = 0; b < NB; ++b) {
    const __mmask16 real = block_mask(2 * pair + b, a.m);
    for (int p = 0; p < P; ++p) {
      const int64_t off = b * xbs + p * kB;
      store_out<A>(acc[p][b], residual ? residual + off : nullptr, y + off, real, k);
    }
  }
}

}  // namespace

}  // namespace ignis::kernels::x86
