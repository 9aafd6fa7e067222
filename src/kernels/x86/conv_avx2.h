// SPDX-License-Identifier: Apache-2.0
// AVX2 pieces of the x86 Conv kernel: the im2col packer that feeds the GEMM its B operand
// straight from the image, and the direct depthwise kernel. The op-level logic (geometry,
// weight prepacking, threading) is in nn_conv.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/gemm_avx2.h"

namespace ignis::kernels::x86 {

// 2-D sliding-window geometry of one convolution (1-D convolutions use ih = oh = kh = 1).
struct ConvGeometry2d {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t ph = 0, pw = 0;  // padding before the first row / column
};

// B operand of a convolution as GEMM: rows are (input channel, ky, kx), columns are output
// positions; `x` points at the first input channel of the group, planes of ih * iw floats.
struct Im2colSource {
  const float* x = nullptr;
  ConvGeometry2d g;
};

// GemmPackFn for an Im2colSource: writes the packed B block without materializing im2col.
void conv_f32_pack_im2col(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, float* dst);

// Whether the direct depthwise kernel handles this geometry: kernel up to 7x7, strides 1
// or 2, no dilation.
bool conv_f32_depthwise_supported(const ConvGeometry2d& g);

// Floats of scratch one call of conv_f32_depthwise_plane needs.
size_t conv_f32_depthwise_scratch(const ConvGeometry2d& g);

// One channel of a depthwise convolution:
//   y[oh x ow] = act(sum_k w[k] * x[window] + bias + residual)
// with `residual` (a plane laid out like y) optional; `e` supplies the activation (its bias
// and residual fields are ignored). Requires AVX2 + FMA.
void conv_f32_depthwise_plane(const ConvGeometry2d& g, const float* x, const float* w, float bias,
                              const float* residual, const GemmEpilogue& e, float* y, float* scratch);

}  // namespace ignis::kernels::x86
