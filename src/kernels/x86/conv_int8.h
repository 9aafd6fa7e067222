// SPDX-License-Identifier: Apache-2.0
// The pieces of the x86 QLinearConv (nn_qlinear_conv.cc) that run vector code: the phase
// planes the int8 GEMM's B operand is read from, and the direct depthwise convolution (conv_int8_avx2.cc,
// conv_int8_depthwise_avx512vnni.cc, conv_int8_depthwise_permute_avx512vbmi.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/x86/conv_avx2.h"

namespace ignis::kernels::x86 {

// The phase planes of x padded with its zero point, for a convolution of strides (sh, sw):
// plane (c, py, px), at out + ((c * sh + py) * sw + px) * rows * cols, holds padded input
// position (i * sh + py, j * sw + px) at (i, j) (padded position (y, x) is input (y - ph,
// x - pw), or `pad` outside the input), for i < rows, j < cols. Tap (ky, kx) of output (oy, ox)
// then reads plane (c, ky*dh % sh, kx*dw % sw) at (oy + ky*dh / sh, ox + kx*dw / sw): each tap
// is one shifted view of a plane. With unit strides there is one plane per channel, the padded
// input itself. Only the phases some tap reads are written (`used`, bit py * sw + px).
void conv_int8_phase_planes(const uint8_t* x, int64_t channels, const ConvGeometry2d& g, int64_t rows, int64_t cols,
                            uint64_t used, uint8_t pad, uint8_t* out);

// One depthwise plane: y = requantize(sum_t (x - x_zp) (w_t - w_zp) + bias) with the int32
// weights w_t - w_zp given, x uint8 or int8 (x_signed), written as uint8 or int8
// (y_signed), or the sums plus bias as int32 into y32. Strides 1 and 2, any dilation and
// padding.
struct DepthwiseInt8Plane {
  const uint8_t* x = nullptr;     // [ih, iw]
  const int32_t* w = nullptr;     // [kh * kw], zero point subtracted
  int32_t bias = 0;
  int32_t x_zero_point = 0;
  float multiplier = 1.0f;
  int32_t y_zero_point = 0, q_min = 0, q_max = 255;
  bool x_signed = false, y_signed = false;
  uint8_t* y = nullptr;           // [oh, ow]
  int32_t* y32 = nullptr;         // or the sums themselves (ConvInteger; AVX2 only), [oh, ow]
};

bool conv_int8_depthwise_supported(const ConvGeometry2d& g);
// Scratch bytes one call needs (the padded plane).
size_t conv_int8_depthwise_scratch(const ConvGeometry2d& g);
void conv_int8_depthwise_avx2(const ConvGeometry2d& g, const DepthwiseInt8Plane& p, uint8_t* scratch);
// The same on AVX-512 BW + VNNI (conv_int8_depthwise_avx512vnni.cc), for CPUs where
// int8_gemm_backend_default() is the VNNI one.
size_t conv_int8_depthwise_avx512_scratch(const ConvGeometry2d& g);
void conv_int8_depthwise_avx512(const ConvGeometry2d& g, const DepthwiseInt8Plane& p, uint8_t* scratch);
// Every channel of one image at once, for the kernel with 16 channels in the vector lanes
// (conv_int8_depthwise_lanes_avx512vnni.cc): the same arithmetic as DepthwiseInt8Plane, with
// the per-channel values as arrays.
struct DepthwiseInt8Channels {
  const uint8_t* x = nullptr;           // [C, ih, iw]
  const int32_t* w = nullptr;           // [C, kh * kw], zero points subtracted
  const int32_t* bias = nullptr;        // [C], or none
  const float* multiplier = nullptr;    // [C]
  int32_t x_zero_point = 0;
  int32_t y_zero_point = 0, q_min = 0, q_max = 255;
  bool x_signed = false, y_signed = false;
  uint8_t* y = nullptr;                 // [C, oh, ow]
};

// The extent of x padded as far as the outputs' taps reach (the lanes kernels' planes).
inline int64_t lanes_padded_rows(const ConvGeometry2d& g) { return (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1; }
inline int64_t lanes_padded_cols(const ConvGeometry2d& g) { return (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1; }

// Scratch bytes one call needs (one padded block of 16 channels as int32).
size_t conv_int8_depthwise_lanes_scratch(const ConvGeometry2d& g);
// Channels [c_begin, c_end), in blocks of 16 from c_begin; any strides, dilations, padding
// (non-negative) and kh * kw <= 64, on AVX-512 BW + VNNI.
void conv_int8_depthwise_lanes_avx512(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                                      int64_t c_end, uint8_t* scratch);

// The same on AVX2 (conv_int8_depthwise_lanes_avx2.cc): blocks of 16 channels as int16 lanes.
size_t conv_int8_depthwise_lanes_avx2_scratch(const ConvGeometry2d& g);
void conv_int8_depthwise_lanes_avx2(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                                    int64_t c_end, uint8_t* scratch);

// Channels [c_begin, c_end) one plane at a time with 16 output positions in the vector lanes
// (conv_int8_depthwise_permute_avx512vbmi.cc), on AVX-512 VBMI + VNNI + BW, for weights w_t
// (zero points subtracted) that all fit int8 and geometries conv_int8_depthwise_vbmi_supported
// accepts (KW <= 8 and 15 * SW + (KW - 1) * DW < 64: a kernel row's taps of 16 outputs lie in
// one 64-byte load). All three are built with those ISA flags: call them only where the CPU
// has them.
bool conv_int8_depthwise_vbmi_supported(const ConvGeometry2d& g);
// Scratch bytes one call needs (one padded plane and its outputs).
size_t conv_int8_depthwise_vbmi_scratch(const ConvGeometry2d& g);
void conv_int8_depthwise_vbmi(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin, int64_t c_end,
                              uint8_t* scratch);

}  // namespace ignis::kernels::x86
