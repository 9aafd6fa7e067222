// SPDX-License-Identifier: Apache-2.0
// Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops: reads
// kernel_shape, strides, dilations, pads, auto_pad (and output_shape/output_padding for
// ConvTranspose), validates them and computes output extents and the padding applied.
// Shape inference and kernels call the same functions, so they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/attribute.h"
#include "ignis/shape.h"
#include "ignis/status.h"

namespace ignis {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// Parses NOTSET / SAME_UPPER / SAME_LOWER / VALID; nullopt for anything else.
std::optional<AutoPad> parse_auto_pad(std::string_view s);

// Geometry of one windowed op over `rank` spatial axes. For Conv and pools, output position o
// reads input positions o * stride - pad_begin + k * dilation; for ConvTranspose, input
// position i writes output positions i * stride - pad_begin + k * dilation.
struct WindowGeometry {
  static constexpr int kMaxSpatial = Shape::kMaxRank - 2;

  int rank = 0;
  int64_t in[kMaxSpatial] = {};
  int64_t out[kMaxSpatial] = {};
  int64_t kernel[kMaxSpatial] = {};
  int64_t stride[kMaxSpatial] = {};
  int64_t dilation[kMaxSpatial] = {};
  int64_t pad_begin[kMaxSpatial] = {};
  int64_t pad_end[kMaxSpatial] = {};

  // Span of one window along axis i: (kernel - 1) * dilation + 1.
  int64_t extent(int i) const { return (kernel[i] - 1) * dilation[i] + 1; }
  int64_t in_numel() const { return product(in); }
  int64_t out_numel() const { return product(out); }
  int64_t kernel_numel() const { return product(kernel); }
  // 1x1 kernel, unit strides, no padding: the window op is a plain matrix product.
  bool is_pointwise() const;

 private:
  int64_t product(const int64_t* v) const {
    int64_t p = 1;
    for (int i = 0; i < rank; ++i) p *= v[i];
    return p;
  }
};

// Conv and pooling geometry. `in` holds the input's spatial extents. `weight_kernel` holds
// the kernel extents taken from the weight tensor (Conv); when empty, the kernel_shape
// attribute is required (pools). `ceil_mode` selects the pooling ceil rounding, under which
// a last window that would start inside the end padding is dropped (as PyTorch and
// onnxruntime do). Failures are InvalidArgument with a message naming the attribute.
Result<WindowGeometry> make_window_geometry(const AttrMap& attrs, std::span<const int64_t> in,
                                            std::span<const int64_t> weight_kernel, bool ceil_mode);

// ConvTranspose geometry: output extents from output_shape, auto_pad or pads together with
// output_padding, following the ONNX ConvTranspose equations (pads split with floor division
// when derived from output_shape or SAME_*).
Result<WindowGeometry> make_transposed_window_geometry(const AttrMap& attrs, std::span<const int64_t> in,
                                                       std::span<const int64_t> weight_kernel);

}  // namespace ignis
