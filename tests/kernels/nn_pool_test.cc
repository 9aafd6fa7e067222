// SPDX-License-Identifier: Apache-2.0
// Tests for MaxPool, AveragePool, LpPool, the Global* pools and MaxUnpool. Expected values are
// hand-derived on tiny inputs or come from direct window loops written here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

enum class Kind { Max, Avg, AvgIncludePad, Lp2 };

// 2-D pooling over [N, C, H, W] by definition; pads given as begin/end per axis.
std::vector<double> naive_pool_2d(Kind kind, const Shape& xs, const std::vector<float>& x, std::vector<int64_t> k,
                                  std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> pb,
                                  std::vector<int64_t> pe, std::vector<int64_t> out) {
  std::vector<double> y;
  const int64_t h = xs[2], w = xs[3];
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (int64_t oh = 0; oh < out[0]; ++oh)
      for (int64_t ow = 0; ow < out[1]; ++ow) {
        double acc = kind == Kind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t valid = 0, padded = 0;
        for (int64_t kh = 0; kh < k[0]; ++kh)
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            const int64_t ih = oh * s[0] - pb[0] + kh * d[0], iw = ow * s[1] - pb[1] + kw * d[1];
            if (ih >= -pb[0] && ih < h + pe[0] && iw >= -pb[1] && iw < w + pe[1]) ++padded;
            if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
            ++valid;
            const double v = x[(p * h + ih) * w + iw];
            if (kind == Kind::Max) acc = std::max(acc, v);
            else if (kind == Kind::Lp2) acc += v * v;
            else acc += v;
          }
        if (kind == Kind::Avg) acc /= static_cast<double>(valid);
        if (kind == Kind::AvgIncludePad) acc /= static_cast<double>(padded);
        if (kind == Kind::Lp2) acc = std::sqrt(acc);
        y.push_back(acc);
      }
  return y;
}

struct PoolCase {
  std::string name;
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool ceil_mode;
  std::string auto_pad;
  std::vector<int64_t> pad_begin, pad_end, out;  // worked out by hand
};

class Pool2d : public ::testing::TestWithParam<PoolCase> {};

TEST_P(Pool2d, MatchesWindowLoops) {
  const PoolCase pc = GetParam();
  Tensor x = random_tensor(pc.x, 51);
  const auto xv = values_of<float>(x);
  const std::vector<int64_t> strides = pc.strides.empty() ? std::vector<int64_t>{1, 1} : pc.strides;
  const std::vector<int64_t> dil = pc.dilations.empty() ? std::vector<int64_t>{1, 1} : pc.dilations;
  for (Kind kind : {Kind::Max, Kind::Avg, Kind::AvgIncludePad, Kind::Lp2}) {
    OpCall call;
    call.op_type = kind == Kind::Max ? "MaxPool" : (kind == Kind::Lp2 ? "LpPool" : "AveragePool");
    call.opset = kind == Kind::Max ? 12 : 19;
    call.attrs.set("kernel_shape", attr_ints(pc.kernel));
    if (!pc.strides.empty()) call.attrs.set("strides", attr_ints(pc.strides));
    if (!pc.dilations.empty()) call.attrs.set("dilations", attr_ints(pc.dilations));
    if (!pc.pads.empty()) call.attrs.set("pads", attr_ints(pc.pads));
    if (pc.ceil_mode) call.attrs.set("ceil_mode", attr_int(1));
    if (!pc.auto_pad.empty()) call.attrs.set("auto_pad", attr_string(pc.auto_pad));
    if (kind == Kind::AvgIncludePad) call.attrs.set("count_include_pad", attr_int(1));
    call.inputs = {x};
    const auto want = naive_pool_2d(kind, pc.x, xv, pc.kernel, strides, dil, pc.pad_begin, pc.pad_end, pc.out);
    for (int threads : {1, 2}) {
      auto r = run_op_threads(call, threads);
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      ASSERT_EQ((*r)[0].shape(), (Shape{pc.x[0], pc.x[1], pc.out[0], pc.out[1]})) << pc.name;
      expect_close((*r)[0], want, 1e-5, 1e-6, pc.name + " " + call.op_type);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Pool2d,
    ::testing::Values(PoolCase{"default", {1, 2, 5, 6}, {2, 2}, {}, {}, {}, false, "", {0, 0}, {0, 0}, {4, 5}},
                      PoolCase{"strided_padded", {2, 3, 7, 8}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, false, "", {1, 1},
                               {1, 1}, {4, 4}},
                      PoolCase{"asym_pads", {1, 1, 6, 5}, {3, 2}, {1, 2}, {}, {2, 0, 1, 1}, false, "", {2, 0},
                               {1, 1}, {7, 3}},
                      PoolCase{"dilated", {1, 2, 7, 7}, {2, 3}, {1, 2}, {2, 2}, {1, 1, 0, 1}, false, "", {1, 1},
                               {0, 1}, {6, 3}},
                      // ceil: (6 + 0 - 3) / 2 + 1 = 2.5 -> 3; last window starts at 4 < 6, kept.
                      PoolCase{"ceil", {1, 1, 6, 6}, {3, 3}, {2, 2}, {}, {}, true, "", {0, 0}, {0, 0}, {3, 3}},
                      // ceil with pads: (5 + 2 - 2) / 2 + 1 = 3.5 -> 4, but the 4th window would start at
                      // 3*2 = 6 >= 5 + 1 (inside the end pad): dropped, 3.
                      PoolCase{"ceil_drop", {1, 1, 5, 5}, {2, 2}, {2, 2}, {}, {1, 1, 1, 1}, true, "", {1, 1},
                               {1, 1}, {3, 3}},
                      PoolCase{"same_upper", {1, 1, 5, 6}, {3, 2}, {2, 2}, {}, {}, false, "SAME_UPPER", {1, 0},
                               {1, 0}, {3, 3}},
                      PoolCase{"same_lower", {1, 1, 6, 6}, {2, 3}, {1, 1}, {}, {}, false, "SAME_LOWER", {1, 1},
                               {0, 1}, {6, 6}},
                      PoolCase{"valid", {1, 1, 6, 7}, {3, 3}, {2, 2}, {}, {}, false, "VALID", {0, 0}, {0, 0}, {2, 3}}),
    [](const ::testing::TestParamInfo<PoolCase>& info) { return info.param.name; });

TEST(MaxPoolOp, IndicesRowAndColumnMajor) {
  // 1 image, 2 channels of 3x4. Window 2x2 stride 2 -> 1x2 per channel.
  OpCall call;
  call.op_type = "MaxPool";
  call.opset = 12;
  call.num_outputs = 2;
  call.attrs.set("kernel_shape", attr_ints({2, 2}));
  call.attrs.set("strides", attr_ints({2, 2}));
  call.inputs = {make_tensor_f32({1, 2, 3, 4}, {1, 9, 2, 3,   //
                                                4, 5, 8, 7,   //
                                                0, 0, 0, 0,   //
                                                -1, -2, -3, -4,  //
                                                -5, -6, -7, -0.5f,  //
                                                9, 9, 9, 9})};
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close((*r)[0], {9, 8, -1, -0.5}, 0, 0, "values");
  // Row-major flat indices over the whole tensor: channel 1 starts at 12.
  EXPECT_EQ(values_of<int64_t>((*r)[1]), (std::vector<int64_t>{1, 6, 12, 19}));
  call.attrs.set("storage_order", attr_int(1));
  r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value());
  // Column-major within the plane: (h, w) -> h + w * 3.
  EXPECT_EQ(values_of<int64_t>((*r)[1]), (std::vector<int64_t>{3, 7, 12, 12 + 1 + 3 * 3}));
}

TEST(MaxPoolOp, IgnoresNaNAndSupportsInt8) {
  OpCall call;
  call.op_type = "MaxPool";
  call.opset = 12;
  call.attrs.set("kernel_shape", attr_ints({2}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  call.inputs = {make_tensor_f32({1, 1, 5}, {nan, 1, nan, nan, -2})};
  expect_close(run1(call), {1, 1, nan, -2}, 0, 0, "nan");
  call.inputs = {make_tensor<int8_t>({1, 1, 4}, {-128, -128, 5, -7})};
  EXPECT_EQ(values_of<int8_t>(run1(call)), (std::vector<int8_t>{-128, 5, 5}));
  call.opset = 11;
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

TEST(MaxPoolOp, ThreeDimensional) {
  OpCall call;
  call.op_type = "MaxPool";
  call.opset = 12;
  call.attrs.set("kernel_shape", attr_ints({2, 2, 2}));
  call.attrs.set("pads", attr_ints({0, 1, 0, 1, 0, 0}));
  std::vector<float> x(27);
  for (int i = 0; i < 27; ++i) x[i] = static_cast<float>((i * 7) % 27);
  call.inputs = {make_tensor_f32({1, 1, 3, 3, 3}, x)};
  Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3, 2}));
  std::vector<double> want;
  for (int d = 0; d < 3; ++d)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 2; ++w) {
        double m = -1e9;
        for (int kd = 0; kd < 2; ++kd)
          for (int kh = 0; kh < 2; ++kh)
            for (int kw = 0; kw < 2; ++kw) {
              const int id = d + kd, ih = h - 1 + kh, iw = w + kw;
              if (id < 3 && ih >= 0 && ih < 3 && iw < 3) m = std::max<double>(m, x[(id * 3 + ih) * 3 + iw]);
            }
        want.push_back(m);
      }
  expect_close(y, want, 0, 0, "3-D");
}

TEST(AveragePoolOp, OneDimensionalCountIncludePad) {
  OpCall call;
  call.op_type = "AveragePool";
  call.opset = 11;
  call.attrs.set("kernel_shape", attr_ints({3}));
  call.attrs.set("pads", attr_ints({1, 1}));
  call.inputs = {make_tensor_f32({1, 1, 4}, {3, 6, 9, 12})};
  expect_close(run1(call), {4.5, 6, 9, 10.5}, 1e-6, 0, "exclude pad");
  call.attrs.set("count_include_pad", attr_int(1));
  expect_close(run1(call), {3, 6, 9, 7}, 1e-6, 0, "include pad");
}

TEST(PoolOps, RejectInvalidAttributes) {
  OpCall call;
  call.op_type = "MaxPool";
  call.opset = 12;
  call.inputs = {random_tensor({1, 1, 4, 4}, 1)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "missing kernel_shape";
  call.attrs.set("kernel_shape", attr_ints({2}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "kernel_shape length";
  call.attrs.set("kernel_shape", attr_ints({5, 2}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "kernel larger than input";
  call.attrs.set("kernel_shape", attr_ints({2, 2}));
  call.attrs.set("ceil_mode", attr_int(2));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "ceil_mode 2";
  call.attrs = AttrMap();
  call.attrs.set("kernel_shape", attr_ints({2, 2}));
  call.inputs = {random_tensor({4, 4}, 1)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "rank 2";
  call.op_type = "LpPool";
  call.inputs = {random_tensor({1, 1, 4, 4}, 1)};
  call.attrs.set("p", attr_int(0));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "p = 0";
}

TEST(PoolOps, ZeroBatch) {
  OpCall call;
  call.op_type = "AveragePool";
  call.attrs.set("kernel_shape", attr_ints({2, 2}));
  call.inputs = {random_tensor({0, 3, 4, 4}, 1)};
  EXPECT_EQ(run1(call).shape(), (Shape{0, 3, 3, 3}));
}

TEST(GlobalPoolOps, ReduceEachPlane) {
  const std::vector<float> x = {1, 2, 3, 4, -1, -2, -3, 0.5f};
  OpCall call;
  call.inputs = {make_tensor_f32({1, 2, 2, 2}, x)};
  call.op_type = "GlobalAveragePool";
  Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  expect_close(y, {2.5, -1.375}, 1e-6, 0, "avg");
  call.op_type = "GlobalMaxPool";
  expect_close(run1(call), {4, 0.5}, 0, 0, "max");
  call.op_type = "GlobalLpPool";
  call.opset = 2;
  expect_close(run1(call), {std::sqrt(30.0), std::sqrt(14.25)}, 1e-6, 0, "lp2");
  call.attrs.set("p", attr_int(1));
  expect_close(run1(call), {10, 6.5}, 1e-6, 0, "lp1");
  call.op_type = "GlobalAveragePool";
  call.inputs = {make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6})};
  expect_close(run1(call), {1, 2, 3, 4, 5, 6}, 0, 0, "no spatial axes");
}

TEST(MaxUnpoolOp, ScattersIntoUnpooledShape) {
  OpCall call;
  call.op_type = "MaxUnpool";
  call.opset = 11;
  call.attrs.set("kernel_shape", attr_ints({2, 2}));
  call.attrs.set("strides", attr_ints({2, 2}));
  call.inputs = {make_tensor_f32({1, 1, 1, 2}, {7, 8}), make_tensor_i64({1, 1, 1, 2}, {1, 7})};
  Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 4}));
  expect_close(y, {0, 7, 0, 0, 0, 0, 0, 8}, 0, 0, "default shape");
  // A larger output_shape keeps the unpooled block at the origin.
  call.inputs.push_back(make_tensor_i64({4}, {1, 1, 3, 5}));
  y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 5}));
  expect_close(y, {0, 7, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0}, 0, 0, "output_shape");
  call.inputs[2] = make_tensor_i64({4}, {1, 1, 1, 4});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "smaller output_shape";
  call.inputs.pop_back();
  call.inputs[1] = make_tensor_i64({1, 1, 1, 2}, {1, 8});
  EXPECT_EQ(status_of(call), StatusCode::OutOfRange);
}

}  // namespace
}  // namespace ignis::nn_test
