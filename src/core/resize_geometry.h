// SPDX-License-Identifier: Apache-2.0
// Resize / Upsample parameters shared by shape inference and the kernels: the
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

// Per-axis coordinate math, shared by the reference kernel and the optimized ones so that they
// pick the same source positions.

// Source coordinate of output coordinate o along `axis` (input extent `in`); sets `outside`
// for tf_crop_and_resize positions that must take the extrapolation value.
double resize_source_coord(const ResizeParams& p, int axis, int64_t in, int64_t o, bool& outside);

// The index nearest mode picks for source coordinate x (not yet clamped to the input).
int64_t resize_nearest_index(const ResizeParams& p, int axis, double x);

// Interpolation taps of one axis (linear or cubic): out * n (index, weight) pairs, indices
// clamped to the input, weights renormalized for antialias and exclude_outside, and per output
// the tf_crop_and_resize extrapolation flag.
struct ResizeTaps {
  int n = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<char> outside;
};

ResizeTaps resize_axis_taps(const ResizeParams& p, int axis, int64_t in);

// True when `axis` keeps its extent and positions (the reference skips such axes).
bool resize_axis_is_identity(const ResizeParams& p, int axis, int64_t in);

}  // namespace ignis
