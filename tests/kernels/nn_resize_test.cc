// SPDX-License-Identifier: Apache-2.0
// Tests for Resize and Upsample. Expected values are hand-derived (ONNX's documented
// examples for the small cases) or come from a direct 2-D weighted sum written here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

const Tensor kEmpty;

OpCall resize_call(const Tensor& x, const std::vector<float>& scales, const std::vector<int64_t>& sizes,
                   int64_t opset = 13) {
  OpCall call;
  call.op_type = "Resize";
  call.opset = opset;
  call.inputs = {x, kEmpty, scales.empty() ? kEmpty : make_tensor_f32({static_cast<int64_t>(scales.size())}, scales)};
  if (!sizes.empty()) call.inputs.push_back(make_tensor_i64({static_cast<int64_t>(sizes.size())}, sizes));
  return call;
}

const Tensor k2x2 = make_tensor_f32({1, 1, 2, 2}, {1, 2, 3, 4});

TEST(ResizeOp, NearestUpsample) {
  OpCall call = resize_call(k2x2, {1, 1, 2, 3}, {});
  Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 6}));
  expect_close(y, {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0, 0, "nearest");
}

TEST(ResizeOp, NearestModes) {
  // 1-D, 4 -> 8 with asymmetric coordinates: x = o / 2 = 0, 0.5, 1, 1.5, ...
  Tensor x = make_tensor_f32({4}, {10, 20, 30, 40});
  struct Case {
    std::string mode;
    std::vector<double> want;
  };
  for (const Case& c : {Case{"round_prefer_floor", {10, 10, 20, 20, 30, 30, 40, 40}},
                        Case{"round_prefer_ceil", {10, 20, 20, 30, 30, 40, 40, 40}},
                        Case{"floor", {10, 10, 20, 20, 30, 30, 40, 40}},
                        Case{"ceil", {10, 20, 20, 30, 30, 40, 40, 40}}}) {
    OpCall call = resize_call(x, {2}, {});
    call.attrs.set("coordinate_transformation_mode", attr_string("asymmetric"));
    call.attrs.set("nearest_mode", attr_string(c.mode));
    expect_close(run1(call), c.want, 0, 0, c.mode);
  }
}

TEST(ResizeOp, LinearHalfPixelAndAlignCorners) {
  OpCall call = resize_call(k2x2, {1, 1, 2, 2}, {});
  call.attrs.set("mode", attr_string("linear"));
  expect_close(run1(call), {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, 1e-6, 0,
               "half_pixel");
  call.attrs.set("coordinate_transformation_mode", attr_string("align_corners"));
  const double t = 1.0 / 3;
  expect_close(run1(call),
               {1, 1 + t, 2 - t, 2, 1 + 2 * t, 2, 2 + t, 3 - t, 2 + t, 3 - t, 3, 3 + t, 3, 3 + t, 4 - t, 4}, 1e-6, 0,
               "align_corners");
}

TEST(ResizeOp, SizesInputAndIntegerRounding) {
  // uint8 linear: values are rounded half to even and saturated.
  Tensor x = make_tensor<uint8_t>({1, 3}, {0, 255, 1});
  OpCall call = resize_call(x, {}, {1, 5});
  call.attrs.set("mode", attr_string("linear"));
  call.attrs.set("coordinate_transformation_mode", attr_string("align_corners"));
  // positions 0, 0.5, 1, 1.5, 2 -> 0, 127.5, 255, 128, 1
  EXPECT_EQ(values_of<uint8_t>(run1(call)), (std::vector<uint8_t>{0, 128, 255, 128, 1}));
}

// Keys cubic kernel, written independently of the kernel under test.
double keys(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
  if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
  return 0;
}

// Weighted sum over a 4x4 neighbourhood per output pixel of a [H, W] image.
std::vector<double> cubic_2d(const std::vector<float>& x, int64_t h, int64_t w, int64_t oh, int64_t ow,
                             const std::function<double(int64_t, int64_t, int64_t)>& coord, double a,
                             bool exclude_outside) {
  std::vector<double> y;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const double yi = coord(i, h, oh), xj = coord(j, w, ow);
      const int64_t fi = static_cast<int64_t>(std::floor(yi)), fj = static_cast<int64_t>(std::floor(xj));
      double wsum_i = 0, wsum_j = 0;
      std::vector<double> wi, wj;
      for (int64_t u = fi - 1; u <= fi + 2; ++u) {
        double v = keys(u - yi, a);
        if (exclude_outside && (u < 0 || u >= h)) v = 0;
        wi.push_back(v);
        wsum_i += v;
      }
      for (int64_t u = fj - 1; u <= fj + 2; ++u) {
        double v = keys(u - xj, a);
        if (exclude_outside && (u < 0 || u >= w)) v = 0;
        wj.push_back(v);
        wsum_j += v;
      }
      double s = 0;
      for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q) {
          const int64_t r = std::clamp<int64_t>(fi - 1 + p, 0, h - 1), c = std::clamp<int64_t>(fj - 1 + q, 0, w - 1);
          double wt = wi[p] * wj[q];
          if (exclude_outside) wt /= wsum_i * wsum_j;
          s += wt * x[r * w + c];
        }
      y.push_back(s);
    }
  return y;
}

TEST(ResizeOp, CubicMatchesDirectWeightedSum) {
  const std::vector<float> xv = random_floats(20, 121);
  Tensor x = make_tensor_f32({1, 1, 4, 5}, xv);
  const auto half_pixel = [](double scale) {
    return [scale](int64_t o, int64_t, int64_t) { return (o + 0.5) / scale - 0.5; };
  };
  for (bool exclude : {false, true})
    for (double a : {-0.75, -0.5}) {
      OpCall call = resize_call(x, {1, 1, 1.5f, 0.8f}, {});
      call.attrs.set("mode", attr_string("cubic"));
      call.attrs.set("cubic_coeff_a", attr_float(static_cast<float>(a)));
      call.attrs.set("exclude_outside", attr_int(exclude));
      Tensor y = run1(call);
      ASSERT_EQ(y.shape(), (Shape{1, 1, 6, 4}));
      // Rows use scale 1.5, columns 0.8 (the given scales, not out / in).
      const auto rows = half_pixel(1.5), cols = half_pixel(0.8);
      const auto coord = [&](int64_t o, int64_t in, int64_t out) {
        return in == 4 && out == 6 ? rows(o, in, out) : cols(o, in, out);
      };
      expect_close(y, cubic_2d(xv, 4, 5, 6, 4, coord, a, exclude), 1e-5, 1e-6, "cubic a=" + std::to_string(a) + " exclude=" + std::to_string(exclude));
    }
}

TEST(ResizeOp, TfCropAndResizeExtrapolates) {
  Tensor x = make_tensor_f32({1, 1, 2, 2}, {1, 2, 3, 4});
  OpCall call = resize_call(x, {}, {1, 1, 3, 3});
  call.inputs[1] = make_tensor_f32({8}, {0, 0, 0, 0, 1, 1, 1, 2});
  call.attrs.set("mode", attr_string("linear"));
  call.attrs.set("coordinate_transformation_mode", attr_string("tf_crop_and_resize"));
  call.attrs.set("extrapolation_value", attr_float(-7));
  // Rows: 0, 0.5, 1. Columns: 0, 1, 2 (2 is outside [0, 1]).
  expect_close(run1(call), {1, 2, -7, 2, 3, -7, 3, 4, -7}, 1e-6, 0, "crop");
  call.inputs[1] = kEmpty;
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "roi required";
}

TEST(ResizeOp, AxesAndKeepAspectRatio) {
  Tensor x = make_tensor_f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  OpCall call = resize_call(x, {}, {4, 4}, 18);
  call.attrs.set("axes", attr_ints({2, -1}));
  call.attrs.set("keep_aspect_ratio_policy", attr_string("not_larger"));
  Tensor y = run1(call);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 4})) << "scale min(2, 1) = 1";
  call.attrs.set("keep_aspect_ratio_policy", attr_string("not_smaller"));
  y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 8})) << "scale max(2, 1) = 2";
  call.attrs.set("keep_aspect_ratio_policy", attr_string("stretch"));
  y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  expect_close(y, {1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 5, 6, 7, 8}, 0, 0, "stretch");
  call.attrs.set("axes", attr_ints({2, 2}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "repeated axis";
}

TEST(ResizeOp, AntialiasLinearDownsample) {
  // 8 -> 4 with scale 0.5: the triangle filter widens to 4 taps, weights 1/8, 3/8, 3/8, 1/8.
  Tensor x = make_tensor_f32({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  OpCall call = resize_call(x, {1, 0.5f}, {}, 18);
  call.attrs.set("mode", attr_string("linear"));
  call.attrs.set("antialias", attr_int(1));
  expect_close(run1(call), {1.625, 3.5, 5.5, 7.375}, 1e-6, 0, "antialias");
}

TEST(ResizeOp, OpsetTenAndUpsampleUseAsymmetricFloor) {
  Tensor x = make_tensor_f32({1, 3}, {1, 2, 3});
  OpCall call;
  call.op_type = "Resize";
  call.opset = 10;
  call.inputs = {x, make_tensor_f32({2}, {1, 2.5f})};
  // x = o / 2.5 = 0, 0.4, 0.8, 1.2, 1.6, 2.0, 2.4 -> floor
  expect_close(run1(call), {1, 1, 1, 2, 2, 3, 3}, 0, 0, "resize-10 nearest");
  call.attrs.set("mode", attr_string("linear"));
  expect_close(run1(call), {1, 1.4, 1.8, 2.2, 2.6, 3, 3}, 1e-6, 0, "resize-10 linear");
  call.op_type = "Upsample";
  call.opset = 9;
  expect_close(run1(call), {1, 1.4, 1.8, 2.2, 2.6, 3, 3}, 1e-6, 0, "upsample-9 linear");
  call.opset = 7;
  call.inputs = {x};
  call.attrs.set("scales", attr_floats({1, 2}));
  call.attrs.set("mode", attr_string("nearest"));
  expect_close(run1(call), {1, 1, 2, 2, 3, 3}, 0, 0, "upsample-7");
  call.attrs.set("scales", attr_floats({1, 0.5f}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "upsample scale < 1";
}

TEST(ResizeOp, RejectsInvalidInputs) {
  OpCall call = resize_call(k2x2, {1, 1, 2}, {});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "scales length";
  call = resize_call(k2x2, {1, 1, 2, 2}, {1, 1, 4, 4});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "both scales and sizes";
  call = resize_call(k2x2, {1, 1, 0, 2}, {});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "zero scale";
  call = resize_call(k2x2, {1, 1, 2, 2}, {});
  call.attrs.set("mode", attr_string("bilinear"));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "mode";
  call.attrs.set("mode", attr_string("cubic"));
  call.attrs.set("coordinate_transformation_mode", attr_string("corners"));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "coordinate mode";
  call = resize_call(k2x2, {}, {});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "neither scales nor sizes";
  call = resize_call(make_tensor<bool>({2}, {true, false}), {2}, {});
  call.attrs.set("mode", attr_string("linear"));
  EXPECT_EQ(status_of(call), StatusCode::Unsupported) << "linear on bool";
}

TEST(ResizeOp, NearestOnBoolAndEmptyOutput) {
  OpCall call = resize_call(make_tensor<bool>({2}, {true, false}), {2}, {});
  EXPECT_EQ(values_of<bool>(run1(call)), (std::vector<bool>{true, true, false, false}));
  call = resize_call(k2x2, {1, 1, 0.4f, 1}, {});
  EXPECT_EQ(run1(call).shape(), (Shape{1, 1, 0, 2}));
}

}  // namespace
}  // namespace ignis::nn_test
