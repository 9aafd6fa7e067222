// SPDX-License-Identifier: Apache-2.0
// The transposed GEMM formulation of a convolution for outputs with few positions (the
// 14x14 and 7x7 stages of a ResNet, small images): C^T [positions x channels] =
// im2col^T * W^T, with output positions as the register tile's 8 rows and output channels
// as its 32 columns. The plain formulation puts positions in the 32 columns, so a 7x7
// output (49 positions) fills 49 of 64 columns; here it fills 49 of 56 rows. W^T is packed
// once as the GEMM's B operand, whose panels the GEMM streams once per block of positions
// and prefetches (cold weights are what the deep layers wait for); the im2col^T rows are
// packed per run (conv_f32_pack_im2col_rows). The product lands in scratch and is
// transposed into the NCHW output with bias, residual and activation on the way.
#pragma once

#include <cstdint>

#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

// Whether the transposed formulation is expected to beat the plain one for `positions`
// output positions (oh * ow), `channels` output channels and `depth` multiply-adds per
// output value on the register tile of `backend` (AVX-512 8x32, AVX2 4x24): its better tile
// fill must pay for its store pass (nn_conv.cc has the model and its measurements).
bool conv_transposed_wins(int64_t positions, int64_t channels, int64_t depth, const GemmBackend& backend);

// y[c * ldy + j] = act(ct[j * ldct + c] + bias[c] + residual[c * residual_ld + j]) for
// channels c in [c0, c1) and positions j in [j0, j1): `e` supplies bias (one value per
// channel, bias_rs / bias_cs ignored, may be null), residual (laid out like y, may be null)
// and the activation. Requires AVX-512F.
void conv_f32_store_transposed_avx512(const float* ct, int64_t ldct, int64_t j0, int64_t j1, int64_t c0, int64_t c1,
                                      const GemmEpilogue& e, float* y, int64_t ldy);
// The same on AVX2 + FMA (conv_transposed_avx2.cc).
void conv_f32_store_transposed_avx2(const float* ct, int64_t ldct, int64_t j0, int64_t j1, int64_t c0, int64_t c1,
                                    const GemmEpilogue& e, float* y, int64_t ldy);

}  // namespace ignis::kernels::x86
