// SPDX-License-Identifier: Apache-2.0
#include "core/conv_geometry.h"

#include <algorithm>
#include <vector>

#include "core/strings.h"

namespace ignis {

namespace {

// Attribute values beyond this are rejected so that window arithmetic cannot overflow int64.
constexpr int64_t kMaxAttrValue = int64_t{1} << 31;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Reads an ints attribute that must hold `count` values in [lo, kMaxAttrValue), or `def`
// repeated when absent.
Result<std::vector<int64_t>> read_ints(const AttrMap& attrs, std::string_view name, size_t count, int64_t def,
                                       int64_t lo) {
  const Attribute* a = attrs.find(name);
  if (a == nullptr) return std::vector<int64_t>(count, def);
  std::vector<int64_t> v = attrs.get_ints(name);
  if (a->kind != Attribute::Kind::Ints && a->kind != Attribute::Kind::Int)
    return invalid_argument(str_cat("attribute '", name, "' must be a list of ints"));
  if (v.size() != count)
    return invalid_argument(str_cat("attribute '", name, "' must have ", count, " values, got ", str_list(v)));
  for (int64_t x : v)
    if (x < lo || x >= kMaxAttrValue)
      return invalid_argument(str_cat("attribute '", name, "' values must be >= ", lo, ", got ", str_list(v)));
  return v;
}

struct CommonAttrs {
  AutoPad auto_pad = AutoPad::NotSet;
  std::vector<int64_t> kernel, strides, dilations, pads;
};

Result<CommonAttrs> read_common(const AttrMap& attrs, std::span<const int64_t> in,
                                std::span<const int64_t> weight_kernel) {
  const int rank = static_cast<int>(in.size());
  if (rank < 1 || rank > WindowGeometry::kMaxSpatial)
    return invalid_argument(str_cat("expected 1 to ", WindowGeometry::kMaxSpatial, " spatial axes, got ", rank));
  CommonAttrs c;
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  auto ap = parse_auto_pad(auto_pad);
  if (!ap)
    return invalid_argument(
        str_cat("attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '", auto_pad, "'"));
  c.auto_pad = *ap;

  if (weight_kernel.empty()) {
    if (!attrs.has("kernel_shape")) return invalid_argument("attribute 'kernel_shape' is required");
    IGNIS_ASSIGN_OR_RETURN(c.kernel, read_ints(attrs, "kernel_shape", rank, 1, 1));
  } else {
    if (static_cast<int>(weight_kernel.size()) != rank)
      return invalid_argument(str_cat("weight has ", weight_kernel.size(), " spatial axes, input has ", rank));
    c.kernel.assign(weight_kernel.begin(), weight_kernel.end());
    if (attrs.has("kernel_shape")) {
      IGNIS_ASSIGN_OR_RETURN(auto ks, read_ints(attrs, "kernel_shape", rank, 1, 1));
      if (ks != c.kernel)
        return invalid_argument(str_cat("attribute 'kernel_shape' ", str_list(ks), " does not match the weight's ",
                                        str_list(c.kernel)));
    }
    for (int64_t k : c.kernel)
      if (k < 1 || k >= kMaxAttrValue)
        return invalid_argument(str_cat("weight spatial extents must be positive, got ", str_list(c.kernel)));
  }
  IGNIS_ASSIGN_OR_RETURN(c.strides, read_ints(attrs, "strides", rank, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(c.dilations, read_ints(attrs, "dilations", rank, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(c.pads, read_ints(attrs, "pads", 2 * rank, 0, 0));
  return c;
}

void fill_common(WindowGeometry& g, const CommonAttrs& c, std::span<const int64_t> in) {
  g.rank = static_cast<int>(in.size());
  for (int i = 0; i < g.rank; ++i) {
    g.in[i] = in[i];
    g.kernel[i] = c.kernel[i];
    g.stride[i] = c.strides[i];
    g.dilation[i] = c.dilations[i];
  }
}

}  // namespace

std::optional<AutoPad> parse_auto_pad(std::string_view s) {
  if (s == "NOTSET" || s.empty()) return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  return std::nullopt;
}

bool WindowGeometry::is_pointwise() const {
  for (int i = 0; i < rank; ++i)
    if (kernel[i] != 1 || stride[i] != 1 || pad_begin[i] != 0 || pad_end[i] != 0) return false;
  return true;
}

Result<WindowGeometry> make_window_geometry(const AttrMap& attrs, std::span<const int64_t> in,
                                            std::span<const int64_t> weight_kernel, bool ceil_mode) {
  IGNIS_ASSIGN_OR_RETURN(CommonAttrs c, read_common(attrs, in, weight_kernel));
  WindowGeometry g;
  fill_common(g, c, in);
  for (int i = 0; i < g.rank; ++i) {
    const int64_t extent = g.extent(i);
    switch (c.auto_pad) {
      case AutoPad::NotSet: {
        g.pad_begin[i] = c.pads[i];
        g.pad_end[i] = c.pads[g.rank + i];
        const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - extent;
        if (span < 0)
          return invalid_argument(str_cat("spatial axis ", i, ": padded input extent ", span + extent,
                                          " is smaller than the window extent ", extent));
        if (ceil_mode) {
          g.out[i] = ceil_div(span, g.stride[i]) + 1;
          if ((g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_begin[i]) --g.out[i];
        } else {
          g.out[i] = span / g.stride[i] + 1;
        }
        break;
      }
      case AutoPad::Valid: {
        const int64_t span = g.in[i] - extent;
        if (span < 0)
          return invalid_argument(str_cat("spatial axis ", i, ": input extent ", g.in[i],
                                          " is smaller than the window extent ", extent, " (auto_pad VALID)"));
        g.out[i] = span / g.stride[i] + 1;
        break;
      }
      case AutoPad::SameUpper:
      case AutoPad::SameLower: {
        g.out[i] = ceil_div(g.in[i], g.stride[i]);
        const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + extent - g.in[i]);
        const int64_t small = total / 2;
        g.pad_begin[i] = c.auto_pad == AutoPad::SameUpper ? small : total - small;
        g.pad_end[i] = total - g.pad_begin[i];
        break;
      }
    }
  }
  return g;
}

Result<WindowGeometry> make_transposed_window_geometry(const AttrMap& attrs, std::span<const int64_t> in,
                                                       std::span<const int64_t> weight_kernel) {
  IGNIS_ASSIGN_OR_RETURN(CommonAttrs c, read_common(attrs, in, weight_kernel));
  WindowGeometry g;
  fill_common(g, c, in);
  const int rank = g.rank;
  IGNIS_ASSIGN_OR_RETURN(auto output_padding, read_ints(attrs, "output_padding", rank, 0, 0));
  std::vector<int64_t> output_shape;
  if (attrs.has("output_shape")) {
    output_shape = attrs.get_ints("output_shape");
    // Some exporters write the full N, C, spatial... shape; only the spatial tail counts.
    if (static_cast<int>(output_shape.size()) == rank + 2)
      output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (static_cast<int>(output_shape.size()) != rank)
      return invalid_argument(
          str_cat("attribute 'output_shape' must have ", rank, " values, got ", str_list(output_shape)));
    for (int64_t v : output_shape)
      if (v < 0 || v >= kMaxAttrValue)
        return invalid_argument(str_cat("attribute 'output_shape' values must be >= 0, got ", str_list(output_shape)));
  }
  const bool same = c.auto_pad == AutoPad::SameUpper || c.auto_pad == AutoPad::SameLower;
  for (int i = 0; i < rank; ++i) {
    const int64_t full = g.stride[i] * (g.in[i] - 1) + output_padding[i] + g.extent(i);
    if (!output_shape.empty() || same) {
      g.out[i] = !output_shape.empty() ? output_shape[i] : g.in[i] * g.stride[i];
      // total may be negative: the output is then larger than the full result and the extra
      // positions (at the end, or split) receive only the bias.
      const int64_t total = full - g.out[i];
      const int64_t half = floor_div(total, 2);
      if (c.auto_pad == AutoPad::SameUpper) {
        g.pad_begin[i] = half;
        g.pad_end[i] = total - half;
      } else {
        g.pad_begin[i] = total - half;
        g.pad_end[i] = half;
      }
    } else {
      if (c.auto_pad == AutoPad::NotSet) {
        g.pad_begin[i] = c.pads[i];
        g.pad_end[i] = c.pads[rank + i];
      }
      g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.out[i] < 0)
      return invalid_argument(str_cat("spatial axis ", i, ": computed output extent ", g.out[i], " is negative"));
  }
  return g;
}

}  // namespace ignis
