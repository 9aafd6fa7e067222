// SPDX-License-Identifier: Apache-2.0
// Resize / Upsample parameters shared by shape inference and the reference kernel: the
// attribute enums per opset, and per-axis scales and output extents from the scales or
// sizes input (with axes and keep_aspect_ratio_policy), so both sides agree exactly.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/attribute.h"
#include "ignis/status.h"

namespace ignis {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoord {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNn,
  TfCropAndResize,
};
// Simple is the pre-opset-11 rule: floor when upsampling an axis, ceil when downsampling.
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
  // Per axis of X: the scale used by the coordinate transform, the output extent, the
  // (possibly fractional) target extent scale * in, and the normalized roi.
  std::vector<double> scales;
  std::vector<int64_t> out;
  std::vector<double> out_width;
  std::vector<double> roi_start, roi_end;
};

// The values of the op's inputs that shape the result; null when absent. `scales` holds the
// attribute's values for Upsample-7.
struct ResizeValues {
  const std::vector<double>* scales = nullptr;
  const std::vector<int64_t>* sizes = nullptr;
  const std::vector<double>* roi = nullptr;
};

// Validates attributes and values for Resize (is_upsample false) or Upsample at `opset` and
// computes the output. InvalidArgument for malformed models, Unsupported for valid settings
// ignis does not implement.
Result<ResizeParams> make_resize_params(const AttrMap& attrs, int64_t opset, bool is_upsample,
                                        std::span<const int64_t> in_shape, const ResizeValues& values);

}  // namespace ignis
