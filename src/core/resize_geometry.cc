// SPDX-License-Identifier: Apache-2.0
#include "core/resize_geometry.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/strings.h"

namespace ignis {

namespace {

Result<ResizeMode> parse_mode(const std::string& s, int64_t opset, bool is_upsample) {
  if (s == "nearest") return ResizeMode::Nearest;
  if (s == "linear") return ResizeMode::Linear;
  if (s == "cubic" && !is_upsample && opset >= 11) return ResizeMode::Cubic;
  return invalid_argument(str_cat("attribute 'mode' must be nearest, linear",
                                  (!is_upsample && opset >= 11) ? " or cubic" : "", ", got '", s, "'"));
}

Result<ResizeCoord> parse_coord(const std::string& s) {
  if (s == "half_pixel") return ResizeCoord::HalfPixel;
  if (s == "half_pixel_symmetric") return ResizeCoord::HalfPixelSymmetric;
  if (s == "pytorch_half_pixel") return ResizeCoord::PytorchHalfPixel;
  if (s == "align_corners") return ResizeCoord::AlignCorners;
  if (s == "asymmetric") return ResizeCoord::Asymmetric;
  if (s == "tf_half_pixel_for_nn") return ResizeCoord::TfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return ResizeCoord::TfCropAndResize;
  return invalid_argument(str_cat("attribute 'coordinate_transformation_mode' has unknown value '", s, "'"));
}

Result<NearestMode> parse_nearest(const std::string& s) {
  if (s == "round_prefer_floor") return NearestMode::RoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestMode::RoundPreferCeil;
  if (s == "floor") return NearestMode::Floor;
  if (s == "ceil") return NearestMode::Ceil;
  return invalid_argument(str_cat("attribute 'nearest_mode' has unknown value '", s, "'"));
}

Result<bool> read_flag(const AttrMap& attrs, const char* name) {
  const int64_t v = attrs.get_int(name, 0);
  if (v != 0 && v != 1) return invalid_argument(str_cat("attribute '", name, "' must be 0 or 1, got ", v));
  return v == 1;
}

double cubic_weight(double d, double a) {
  d = std::fabs(d);
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

}  // namespace

Result<ResizeParams> make_resize_params(const AttrMap& attrs, int64_t opset, bool is_upsample,
                                        std::span<const int64_t> in_shape, const ResizeValues& values) {
  ResizeParams p;
  const int rank = static_cast<int>(in_shape.size());
  IGNIS_ASSIGN_OR_RETURN(p.mode, parse_mode(attrs.get_string("mode", "nearest"), opset, is_upsample));
  const bool legacy = is_upsample || opset < 11;
  if (legacy) {
    p.coord = ResizeCoord::Asymmetric;
    p.nearest = NearestMode::Simple;
  } else {
    IGNIS_ASSIGN_OR_RETURN(p.coord, parse_coord(attrs.get_string("coordinate_transformation_mode", "half_pixel")));
    IGNIS_ASSIGN_OR_RETURN(p.nearest, parse_nearest(attrs.get_string("nearest_mode", "round_prefer_floor")));
    p.cubic_a = attrs.get_float("cubic_coeff_a", -0.75f);
    IGNIS_ASSIGN_OR_RETURN(p.exclude_outside, read_flag(attrs, "exclude_outside"));
    p.extrapolation_value = attrs.get_float("extrapolation_value", 0.0f);
  }
  if (opset >= 18 && !is_upsample) {
    IGNIS_ASSIGN_OR_RETURN(p.antialias, read_flag(attrs, "antialias"));
  }

  // Axes the scales/sizes/roi values refer to (opset 18 added the attribute).
  std::vector<int> axes;
  if (!is_upsample && opset >= 18 && attrs.has("axes")) {
    std::vector<bool> seen(rank, false);
    for (int64_t a : attrs.get_ints("axes")) {
      if (a < -rank || a >= rank)
        return invalid_argument(str_cat("attribute 'axes' value ", a, " is out of range for rank ", rank));
      const int ax = static_cast<int>(a < 0 ? a + rank : a);
      if (seen[ax]) return invalid_argument(str_cat("attribute 'axes' repeats axis ", ax));
      seen[ax] = true;
      axes.push_back(ax);
    }
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  const size_t naxes = axes.size();

  const bool has_scales = values.scales && !values.scales->empty();
  const bool has_sizes = values.sizes && !values.sizes->empty();
  if (has_scales && has_sizes) return invalid_argument("only one of 'scales' and 'sizes' may be given");
  if (!has_scales && !has_sizes) return invalid_argument("one of 'scales' and 'sizes' must be given");

  p.scales.assign(rank, 1.0);
  p.out.assign(in_shape.begin(), in_shape.end());
  p.out_width.assign(rank, 0.0);
  for (int i = 0; i < rank; ++i) p.out_width[i] = static_cast<double>(in_shape[i]);

  if (has_scales) {
    const auto& s = *values.scales;
    if (s.size() != naxes)
      return invalid_argument(str_cat("'scales' must have ", naxes, " values, got ", s.size()));
    for (size_t i = 0; i < naxes; ++i) {
      const double v = s[i];
      if (!(v > 0.0) || !std::isfinite(v))
        return invalid_argument(str_cat("'scales' values must be positive, got ", str_list(s)));
      if (is_upsample && v < 1.0)
        return invalid_argument(str_cat("Upsample 'scales' values must be >= 1, got ", str_list(s)));
      const int ax = axes[i];
      p.scales[ax] = v;
      p.out_width[ax] = v * static_cast<double>(in_shape[ax]);
      if (p.out_width[ax] >= 9.0e15) return invalid_argument(str_cat("'scales' value ", v, " is too large"));
      p.out[ax] = static_cast<int64_t>(std::floor(p.out_width[ax]));
    }
  } else {
    const auto& s = *values.sizes;
    if (s.size() != naxes) return invalid_argument(str_cat("'sizes' must have ", naxes, " values, got ", s.size()));
    for (size_t i = 0; i < naxes; ++i) {
      if (s[i] < 0) return invalid_argument(str_cat("'sizes' values must be >= 0, got ", str_list(s)));
      if (in_shape[axes[i]] == 0 && s[i] != 0)
        return invalid_argument(str_cat("cannot resize empty axis ", axes[i], " to extent ", s[i]));
    }
    const std::string policy = opset >= 18 ? attrs.get_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      return invalid_argument(str_cat("attribute 'keep_aspect_ratio_policy' has unknown value '", policy, "'"));
    if (policy == "stretch") {
      for (size_t i = 0; i < naxes; ++i) {
        const int ax = axes[i];
        p.out[ax] = s[i];
        p.out_width[ax] = static_cast<double>(s[i]);
        p.scales[ax] = in_shape[ax] == 0 ? 1.0 : static_cast<double>(s[i]) / static_cast<double>(in_shape[ax]);
      }
    } else {
      double scale = policy == "not_larger" ? HUGE_VAL : 0.0;
      for (size_t i = 0; i < naxes; ++i) {
        if (in_shape[axes[i]] == 0) continue;
        const double r = static_cast<double>(s[i]) / static_cast<double>(in_shape[axes[i]]);
        scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      if (!std::isfinite(scale) || scale <= 0.0) scale = 1.0;
      for (size_t i = 0; i < naxes; ++i) {
        const int ax = axes[i];
        p.scales[ax] = scale;
        p.out[ax] = static_cast<int64_t>(std::floor(scale * static_cast<double>(in_shape[ax]) + 0.5));
        p.out_width[ax] = scale * static_cast<double>(in_shape[ax]);
      }
    }
  }

  p.roi_start.assign(rank, 0.0);
  p.roi_end.assign(rank, 1.0);
  if (p.coord == ResizeCoord::TfCropAndResize) {
    if (values.roi == nullptr || values.roi->size() != 2 * naxes)
      return invalid_argument(str_cat("'roi' must have ", 2 * naxes,
                                      " values for coordinate_transformation_mode tf_crop_and_resize"));
    for (size_t i = 0; i < naxes; ++i) {
      p.roi_start[axes[i]] = (*values.roi)[i];
      p.roi_end[axes[i]] = (*values.roi)[naxes + i];
    }
  }
  return p;
}

double resize_source_coord(const ResizeParams& p, int axis, int64_t in, int64_t o, bool& outside) {
  const double scale = p.scales[axis];
  const double out_w = p.out_width[axis];
  const double x = static_cast<double>(o);
  const double len = static_cast<double>(in);
  outside = false;
  switch (p.coord) {
    case ResizeCoord::HalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoord::HalfPixelSymmetric: {
      const double adjustment = static_cast<double>(p.out[axis]) / out_w;
      const double center = len / 2.0;
      return center * (1.0 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case ResizeCoord::PytorchHalfPixel: return out_w == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
    case ResizeCoord::AlignCorners: return out_w == 1.0 ? 0.0 : x * (len - 1.0) / (out_w - 1.0);
    case ResizeCoord::Asymmetric: return x / scale;
    case ResizeCoord::TfHalfPixelForNn: return (x + 0.5) / scale;
    case ResizeCoord::TfCropAndResize: {
      const double start = p.roi_start[axis], end = p.roi_end[axis];
      double r = out_w == 1.0 ? (end - start) * (len - 1.0) / 2.0 : x * (end - start) * (len - 1.0) / (out_w - 1.0);
      r += start * (len - 1.0);
      outside = r < 0.0 || r > len - 1.0;
      return r;
    }
  }
  return x;
}

int64_t resize_nearest_index(const ResizeParams& p, int axis, double x) {
  switch (p.nearest) {
    case NearestMode::RoundPreferFloor: return static_cast<int64_t>(std::ceil(x - 0.5));
    case NearestMode::RoundPreferCeil: return static_cast<int64_t>(std::floor(x + 0.5));
    case NearestMode::Floor: return static_cast<int64_t>(std::floor(x));
    case NearestMode::Ceil: return static_cast<int64_t>(std::ceil(x));
    case NearestMode::Simple: return static_cast<int64_t>(p.scales[axis] < 1.0 ? std::ceil(x) : std::floor(x));
  }
  return 0;
}


ResizeTaps resize_axis_taps(const ResizeParams& p, int axis, int64_t in) {
  const int64_t out = p.out[axis];
  const bool cubic = p.mode == ResizeMode::Cubic;
  const double radius = cubic ? 2.0 : 1.0;
  // Antialiasing stretches the filter by 1/scale when downsampling.
  const double s = p.antialias ? std::min(p.scales[axis], 1.0) : 1.0;
  const int64_t start = static_cast<int64_t>(std::floor(-radius / s)) + 1;
  ResizeTaps t;
  t.n = static_cast<int>(2 - 2 * start);
  t.index.resize(static_cast<size_t>(out * t.n));
  t.weight.resize(static_cast<size_t>(out * t.n));
  t.outside.resize(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    bool outside;
    const double x = resize_source_coord(p, axis, in, o, outside);
    t.outside[o] = outside;
    const double f = std::floor(x);
    double sum = 0.0, kept = 0.0;
    for (int j = 0; j < t.n; ++j) {
      const double pos = f + static_cast<double>(start + j);
      const double d = (pos - x) * s;
      const double w = cubic ? cubic_weight(d, p.cubic_a) : std::max(0.0, 1.0 - std::fabs(d));
      const int64_t raw = static_cast<int64_t>(pos);
      t.index[o * t.n + j] = std::clamp<int64_t>(raw, 0, in - 1);
      t.weight[o * t.n + j] = w;
      sum += w;
    }
    if (p.antialias && sum != 0.0)
      for (int j = 0; j < t.n; ++j) t.weight[o * t.n + j] /= sum;
    if (p.exclude_outside) {
      for (int j = 0; j < t.n; ++j) {
        const int64_t raw = static_cast<int64_t>(f) + start + j;
        if (raw < 0 || raw >= in) t.weight[o * t.n + j] = 0.0;
        kept += t.weight[o * t.n + j];
      }
      if (kept != 0.0)
        for (int j = 0; j < t.n; ++j) t.weight[o * t.n + j] /= kept;
    }
  }
  return t;
}

bool resize_axis_is_identity(const ResizeParams& p, int axis, int64_t in) {
  if (p.out[axis] != in || std::fabs(p.scales[axis] - 1.0) > 1e-9) return false;
  if (p.coord == ResizeCoord::TfCropAndResize) return p.roi_start[axis] == 0.0 && p.roi_end[axis] == 1.0;
  return true;
}

}  // namespace ignis
