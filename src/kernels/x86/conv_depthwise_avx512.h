// SPDX-License-Identifier: Apache-2.0
// AVX-512 direct depthwise convolution (conv_depthwise_avx512.cc), used by the x86 Conv
// kernel (nn_conv.cc) on its AVX-512 backend; the AVX2 backend uses conv_f32_depthwise_plane
// (conv_avx2.h).
#pragma once

#include <cstddef>

#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

// Floats of scratch one call of conv_f32_depthwise_planes_avx512 needs (a multiple of 16, so
// that per-thread slices of one allocation keep 64-byte alignment). For geometries that
// conv_f32_depthwise_supported accepts.
size_t conv_f32_depthwise_avx512_scratch(const ConvGeometry2d& g);

// Planes [t0, t1) of the depthwise convolution `p` describes (DepthwisePlanes, conv_avx2.h).
// Geometry as accepted by conv_f32_depthwise_supported; scratch
// of conv_f32_depthwise_avx512_scratch(g) floats. Requires AVX-512F. One call covers a range
// of planes: callers built without AVX (nn_conv.cc) then switch instruction sets once per
// range; switching per plane made 7x7 planes 2x slower.
void conv_f32_depthwise_planes_avx512(const ConvGeometry2d& g, const DepthwisePlanes& p, int64_t t0, int64_t t1,
                                      float* scratch);

// Channels in lanes, for small planes (outputs up to 56x56, where it measured faster; see
// conv_depthwise_avx512.cc): the same convolution in work units of 16 output
// channels of one image (unit u = image * ceil(m / 16) + o / 16; the last unit of an image
// takes the m % 16 remaining channels), units [u0, u1). Whether it beats
// conv_f32_depthwise_planes_avx512 for a geometry is conv_f32_depthwise_avx512_lanes; scratch
// of conv_f32_depthwise_avx512_lanes_scratch(g) floats (a multiple of 16). Requires AVX-512F.
bool conv_f32_depthwise_avx512_lanes(const ConvGeometry2d& g);
size_t conv_f32_depthwise_avx512_lanes_scratch(const ConvGeometry2d& g);
void conv_f32_depthwise_lanes_avx512(const ConvGeometry2d& g, const DepthwisePlanes& p, int64_t u0, int64_t u1,
                                     float* scratch);

}  // namespace ignis::kernels::x86
