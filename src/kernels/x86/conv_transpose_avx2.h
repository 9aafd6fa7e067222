// SPDX-License-Identifier: Apache-2.0
// AVX2 piece of the x86 ConvTranspose kernel (nn_conv_transpose.cc): the store of GEMM
// columns into the output when the stride equals the kernel (each output value is one tap of
// one input position, the UNet/FPN upsampling form). Not to be confused with conv_transposed.h,
// the transposed GEMM formulation of a plain Conv.
#pragma once

#include <cstdint>

namespace ignis::kernels::x86 {

// One output channel's plane rows for input rows [0, rows) of a chunk: cols holds the
// channel's kh * kw GEMM rows (tap (a, b) at row a * kw + b, leading dimension ld), each with
// rows * iw input positions; input (r, j) writes y[(r * kh + a) * ow + j * kw + b] = value +
// bias, y being the plane at the chunk's first output row and ow = iw * kw. Requires AVX2.
void conv_transpose_f32_store_tiles(const float* cols, int64_t ld, int64_t kh, int64_t kw, int64_t rows, int64_t iw,
                                    float bias, float* y);

}  // namespace ignis::kernels::x86
