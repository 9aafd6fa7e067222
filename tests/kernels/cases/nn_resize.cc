// SPDX-License-Identifier: Apache-2.0
// Resize and Upsample cases: nearest (every nearest_mode with every coordinate transform) and
// linear (every coordinate transform, exclude_outside, antialias when upsampling) over H and
// W; upscaling and downscaling by integer and fractional factors, from the scales input and
// from the sizes input; widths below and above the 8-float window a permute picks from,
// output widths around multiples of 8, a single output row or column, one axis resized, planes
// enough to split over two threads; and configurations the fast kernel hands back to the
// reference (resized N or C, cubic, tf_crop_and_resize, antialiased downscaling, 3-D inputs);
// and 5-D inputs in the blocked channel layout, H and W resized.
// Values are interpolated, not summed: depth 2 covers the two-tap sums.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

struct ResizeSpec {
  Shape x = {};
  std::vector<double> scales = {};   // given as the scales input when not empty
  std::vector<int64_t> sizes = {};   // otherwise as the sizes input
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest = {};          // nearest_mode, default when empty
  bool exclude_outside = false;
  bool antialias = false;
  std::vector<double> roi = {};      // tf_crop_and_resize
  int64_t opset = 13;
};

KernelCase resize(const ResizeSpec& s) {
  KernelCase c;
  c.op_type = "Resize";
  c.opset = s.antialias ? 18 : s.opset;
  c.depth = 2;
  c.attrs.set("mode", string_attr(s.mode));
  c.attrs.set("coordinate_transformation_mode", string_attr(s.coord));
  if (!s.nearest.empty()) c.attrs.set("nearest_mode", string_attr(s.nearest));
  if (s.exclude_outside) c.attrs.set("exclude_outside", int_attr(1));
  if (s.antialias) c.attrs.set("antialias", int_attr(1));
  const int64_t rank = s.x.rank();
  c.inputs = {s.x, Shape{s.roi.empty() ? 0 : rank * 2}, Shape{rank}, Shape{rank}};
  // roi is required (possibly empty) before opset 13.
  const bool no_roi = s.roi.empty() && c.opset >= 13;
  c.input_dtypes = {DType::F32, no_roi ? DType::Undefined : DType::F32, DType::F32, DType::I64};
  c.input_values = {{}, s.roi, {}, {}};
  if (!s.scales.empty()) {
    c.input_values[2] = s.scales;
    c.inputs.resize(3);
    c.input_dtypes.resize(3);
  } else {
    c.input_dtypes[2] = DType::Undefined;
    c.input_values[3].assign(s.sizes.begin(), s.sizes.end());
  }
  c.label = str_cat("X", s.x.str(), s.scales.empty() ? str_cat(" sizes=", str_list(s.sizes))
                                                      : str_cat(" scales=", str_list(s.scales)),
                    " mode=", s.mode, " coord=", s.coord, s.nearest.empty() ? "" : " nearest_mode=", s.nearest,
                    s.exclude_outside ? " exclude_outside" : "", s.antialias ? " antialias" : "", " opset ", c.opset);
  return c;
}

// Shapes as (input, scales) and (input, sizes) pairs over H and W.
struct Extent {
  Shape x;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
};

std::vector<Extent> extents() {
  return {
      {{1, 3, 5, 7}, {1, 1, 2, 2}, {}},             // upscale by 2, narrow rows (gathers)
      {{1, 2, 8, 13}, {1, 1, 2, 2}, {}},            // output width 26: a tail of 2
      {{2, 3, 6, 11}, {1, 1, 4, 4}, {}},
      {{1, 2, 4, 9}, {1, 1, 8, 8}, {}},
      {{1, 2, 7, 17}, {1, 1, 1.5, 2.5}, {}},        // fractional factors
      {{1, 3, 9, 13}, {1, 1, 0.5, 0.6}, {}},        // downscale
      {{1, 2, 16, 40}, {1, 1, 0.25, 0.3}, {}},      // downscale: windows wider than 8 (gathers)
      {{1, 2, 7, 10}, {1, 1, 1, 3}, {}},            // W only
      {{1, 2, 7, 10}, {1, 1, 3, 1}, {}},            // H only
      {{1, 2, 9, 12}, {1, 1, 1, 1}, {}},            // nothing resized
      {{2, 3, 8, 11}, {}, {2, 3, 17, 29}},          // sizes: up, odd extents
      {{1, 1, 16, 40}, {}, {1, 1, 7, 9}},           // sizes: down
      {{1, 2, 5, 6}, {}, {1, 2, 1, 1}},             // a single output position
      {{1, 2, 3, 4}, {}, {1, 2, 1, 15}},            // a single output row
      {{1, 2, 12, 23}, {}, {1, 2, 12, 23}},         // sizes equal to the input
      {{1, 16, 32, 36}, {1, 1, 2, 2}, {}},          // planes enough for two threads
      {{2, 4, 20, 24}, {}, {2, 4, 47, 73}},
  };
}

}  // namespace

std::vector<KernelCase> resize_cases() {
  std::vector<KernelCase> cases;
  const std::vector<std::string> nearest_coords = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                                   "tf_half_pixel_for_nn"};
  const std::vector<std::string> nearest_modes = {"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"};
  const std::vector<std::string> linear_coords = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
  size_t variant = 0;
  for (const Extent& e : extents()) {
    for (const std::string& coord : nearest_coords)
      for (const std::string& nm : nearest_modes)
        cases.push_back(resize({.x = e.x, .scales = e.scales, .sizes = e.sizes, .coord = coord, .nearest = nm}));
    for (const std::string& coord : linear_coords)
      cases.push_back(resize({.x = e.x, .scales = e.scales, .sizes = e.sizes, .mode = "linear", .coord = coord}));
    // exclude_outside and half_pixel_symmetric (opset 19) on some shapes each.
    ++variant;
    if (variant % 3 == 0)
      cases.push_back(resize({.x = e.x, .scales = e.scales, .sizes = e.sizes, .mode = "linear",
                              .exclude_outside = true}));
    if (variant % 3 == 1) {
      cases.push_back(resize({.x = e.x, .scales = e.scales, .sizes = e.sizes, .mode = "linear",
                              .coord = "half_pixel_symmetric", .opset = 19}));
      cases.push_back(resize({.x = e.x, .scales = e.scales, .sizes = e.sizes, .coord = "half_pixel_symmetric",
                              .nearest = "round_prefer_ceil", .opset = 19}));
    }
  }
  // The models' forms: half_pixel linear x2 / x4, asymmetric floor nearest x2 / x4 / x8.
  cases.push_back(resize({.x = {1, 19, 32, 32}, .scales = {1, 1, 4, 4}, .mode = "linear"}));
  cases.push_back(resize({.x = {1, 8, 24, 40}, .scales = {1, 1, 8, 8}, .coord = "asymmetric", .nearest = "floor"}));
  // Antialias when upsampling keeps two taps (the fast path); when downsampling it widens
  // the filter (the reference).
  cases.push_back(resize({.x = {1, 2, 6, 9}, .scales = {1, 1, 2, 3}, .mode = "linear", .antialias = true}));
  cases.push_back(resize({.x = {1, 2, 16, 20}, .scales = {1, 1, 0.5, 0.4}, .mode = "linear", .antialias = true}));
  // Opset 10 (X, scales; asymmetric coordinates) and opset 11.
  {
    KernelCase c;
    c.op_type = "Resize";
    c.opset = 10;
    c.depth = 2;
    c.attrs.set("mode", string_attr("linear"));
    c.inputs = {{1, 3, 5, 9}, {4}};
    c.input_values = {{}, {1, 1, 2.5, 1.5}};
    c.label = "X[1, 3, 5, 9] scales=[1, 1, 2.5, 1.5] mode=linear opset 10";
    cases.push_back(c);
  }
  cases.push_back(resize({.x = {1, 2, 6, 10}, .scales = {1, 1, 2, 2}, .mode = "linear", .coord = "align_corners",
                          .opset = 11}));
  // Handed back to the reference: resized N or C, cubic, tf_crop_and_resize, 3-D and 5-D.
  cases.push_back(resize({.x = {2, 3, 4, 5}, .scales = {2, 1, 2, 2}}));
  cases.push_back(resize({.x = {1, 3, 4, 5}, .scales = {1, 2, 2, 2}, .mode = "linear"}));
  cases.push_back(resize({.x = {1, 2, 5, 7}, .scales = {1, 1, 2, 2}, .mode = "cubic"}));
  cases.push_back(resize({.x = {1, 2, 6, 8}, .sizes = {1, 2, 5, 9}, .mode = "linear", .coord = "tf_crop_and_resize",
                          .roi = {0, 0, 0.1, 0.2, 1, 1, 0.9, 1.1}}));
  cases.push_back(resize({.x = {2, 5, 9}, .scales = {1, 1, 2}, .mode = "linear"}));
  cases.push_back(resize({.x = {1, 2, 3, 4, 5}, .scales = {1, 1, 2, 2, 2}}));
  // The blocked channel layout [N, CB, H, W, block]: H and W resized, each pixel's block of
  // channels moved or blended whole (run_blocked).
  for (const char* coord : {"half_pixel", "asymmetric", "align_corners"}) {
    cases.push_back(resize({.x = {1, 2, 5, 7, 16}, .scales = {1, 1, 2, 2, 1}, .coord = coord, .nearest = "floor"}));
    cases.push_back(resize({.x = {1, 2, 5, 7, 16}, .scales = {1, 1, 2, 2, 1}, .mode = "linear", .coord = coord}));
  }
  cases.push_back(resize({.x = {2, 3, 6, 9, 8}, .sizes = {2, 3, 13, 4, 8}, .mode = "linear"}));     // up H, down W
  cases.push_back(resize({.x = {1, 2, 7, 10, 16}, .scales = {1, 1, 1, 3, 1}, .mode = "linear"}));  // W only
  cases.push_back(resize({.x = {1, 2, 7, 10, 16}, .scales = {1, 1, 3, 1, 1}, .mode = "linear"}));  // H only
  cases.push_back(resize({.x = {1, 4, 16, 20, 16}, .scales = {1, 1, 2, 2, 1}, .nearest = "round_prefer_ceil"}));
  cases.push_back(resize({.x = {1, 2, 5, 7, 16}, .scales = {1, 1, 2, 2, 2}}));  // the block resized: reference
  return cases;
}

std::vector<KernelCase> upsample_cases() {
  std::vector<KernelCase> cases;
  for (const std::string mode : {"nearest", "linear"}) {
    for (const Shape& x : {Shape{1, 3, 5, 7}, Shape{2, 4, 9, 16}}) {
      KernelCase c;
      c.op_type = "Upsample";
      c.opset = 9;
      c.depth = 2;
      c.attrs.set("mode", string_attr(mode));
      c.inputs = {x, {4}};
      c.input_values = {{}, {1, 1, 2, 3}};
      c.label = str_cat("X", x.str(), " scales=[1, 1, 2, 3] mode=", mode, " opset 9");
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
