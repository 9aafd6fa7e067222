// SPDX-License-Identifier: Apache-2.0
// Symmetric int8 quantization of one float32 weight tensor: the scheme every int8 mode of
// `ignis quantize` writes (weight-only DequantizeLinear, dynamic MatMulInteger, static QDQ).
#pragma once

#include <cstdint>
#include <string>

#include "ignis/compress.h"
#include "ignis/tensor.h"

namespace ignis::compress {

struct Int8Weight {
  Tensor q;      // int8, the shape of the input; values in [-127, 127]
  Tensor scale;  // float32 [channels], or a scalar when per tensor
  Tensor zero;   // int8 zeros, the shape of `scale`
  float max_abs = 0.0f;        // largest |w|
  float max_abs_error = 0.0f;  // largest |w - q * scale|
  int64_t zeros = 0;           // elements of q that are 0
};

// Scale S = max|w| / 127 over each slice along `axis` (over the whole tensor when axis < 0),
// Q = round_half_even(w / S) clamped to [-127, 127] (-128 is never used, keeping the range
// symmetric), so each element is off by at most S / 2. A slice of zeros gets S = 1 (Q = 0).
Int8Weight quantize_int8_symmetric(const Tensor& w, int axis);

// The report entry of float32 weight `w` (initializer `value`, read by `op_type`) quantized as `q`.
WeightChange int8_weight_change(const std::string& value, const std::string& op_type, std::string scheme,
                                const Tensor& w, const Int8Weight& q);

}  // namespace ignis::compress
