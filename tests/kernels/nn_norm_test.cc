// SPDX-License-Identifier: Apache-2.0
// Tests for the normalization ops. Expected values come from per-group loops written here
// (mean, population variance, then the affine step).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

// Mean and population variance of v[idx] for the given indices.
void stats(const std::vector<float>& v, const std::vector<int64_t>& idx, double& mean, double& var) {
  mean = 0;
  for (int64_t i : idx) mean += v[i];
  mean /= static_cast<double>(idx.size());
  var = 0;
  for (int64_t i : idx) var += (v[i] - mean) * (v[i] - mean);
  var /= static_cast<double>(idx.size());
}

TEST(BatchNormalizationOp, InferenceFormula) {
  const Shape xs{2, 3, 2, 2};
  Tensor x = random_tensor(xs, 61), scale = random_tensor({3}, 62), bias = random_tensor({3}, 63),
         mean = random_tensor({3}, 64), var = random_tensor({3}, 65, 0.1f, 2.0f);
  OpCall call;
  call.op_type = "BatchNormalization";
  call.opset = 15;
  call.attrs.set("epsilon", attr_float(0.01f));
  call.inputs = {x, scale, bias, mean, var};
  const auto xv = values_of<float>(x), sv = values_of<float>(scale), bv = values_of<float>(bias),
             mv = values_of<float>(mean), vv = values_of<float>(var);
  std::vector<double> want;
  for (int64_t i = 0; i < xs.numel(); ++i) {
    const int64_t c = (i / 4) % 3;
    want.push_back((xv[i] - mv[c]) / std::sqrt(vv[c] + double(0.01f)) * sv[c] + bv[c]);
  }
  for (int64_t opset : {6, 7, 9, 14, 15}) {
    call.opset = opset;
    expect_close(run1(call), want, 1e-5, 1e-6, "opset " + std::to_string(opset));
  }
}

TEST(BatchNormalizationOp, NonSpatialBeforeOpset9) {
  Tensor x = make_tensor_f32({2, 2, 1}, {1, 2, 3, 4});
  OpCall call;
  call.op_type = "BatchNormalization";
  call.opset = 7;
  call.attrs.set("spatial", attr_int(0));
  call.attrs.set("epsilon", attr_float(0));
  call.inputs = {x, make_tensor_f32({2, 1}, {1, 2}), make_tensor_f32({2, 1}, {0, 1}), make_tensor_f32({2, 1}, {1, 0}),
                 make_tensor_f32({2, 1}, {1, 4})};
  expect_close(run1(call), {0, 3, 2, 5}, 1e-6, 0, "per-feature parameters");
}

// training_mode=1 normalizes with the batch's mean and population variance and returns
// running = input * momentum + batch * (1 - momentum), worked out by hand here.
TEST(BatchNormalizationOp, TrainingModeUsesBatchStatistics) {
  OpCall call;
  call.op_type = "BatchNormalization";
  call.opset = 15;
  call.attrs.set("training_mode", attr_int(1));
  call.attrs.set("epsilon", attr_float(0));
  call.num_outputs = 3;
  // Channel 0 holds 1, 3, 5, 7 (mean 4, variance 5); channel 1 holds 2, 4, 2, 4 (mean 3, variance 1).
  call.inputs = {make_tensor_f32({2, 2, 2}, {1, 3, 2, 4, 5, 7, 2, 4}), make_tensor_f32({2}, {2, 1}),
                 make_tensor_f32({2}, {0, 1}), make_tensor_f32({2}, {0, 10}), make_tensor_f32({2}, {1, 3})};
  auto out = run_op_threads(call, 1);
  ASSERT_TRUE(out) << out.error().to_string();
  const double s = 2.0 / std::sqrt(5.0);
  expect_close((*out)[0], {-3 * s, -1 * s, 0, 2, 1 * s, 3 * s, 0, 2}, 1e-6, 1e-6, "Y");
  expect_close((*out)[1], {0 * 0.9 + 4 * 0.1, 10 * 0.9 + 3 * 0.1}, 1e-6, 1e-6, "running mean");
  expect_close((*out)[2], {1 * 0.9 + 5 * 0.1, 3 * 0.9 + 1 * 0.1}, 1e-6, 1e-6, "running var");
}

TEST(BatchNormalizationOp, TypesAndTrainingMode) {
  OpCall call;
  call.op_type = "BatchNormalization";
  call.opset = 15;
  call.inputs = {random_tensor({1, 2, 3}, 1), random_tensor({2}, 2), random_tensor({2}, 3),
                 make_tensor<double>({2}, {0, 0}), make_tensor<double>({2}, {1, 1})};
  EXPECT_EQ(status_of(call), StatusCode::Ok) << "opset 15 allows double mean/var";
  call.opset = 9;
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.opset = 15;
  call.attrs.set("training_mode", attr_int(1));
  call.num_outputs = 3;
  EXPECT_EQ(status_of(call), StatusCode::Ok) << "training mode with running statistics";
  call.attrs.set("training_mode", attr_int(2));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.attrs = AttrMap();
  call.opset = 9;
  call.inputs[3] = random_tensor({2}, 4);
  call.inputs[4] = random_tensor({2}, 5, 0.5f, 1.0f);
  call.num_outputs = 5;
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
  call.num_outputs = 1;
  call.inputs[1] = random_tensor({3}, 2);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "scale size";
}

TEST(InstanceNormalizationOp, PerImagePerChannel) {
  const Shape xs{2, 3, 5};
  Tensor x = random_tensor(xs, 71), s = random_tensor({3}, 72), b = random_tensor({3}, 73);
  OpCall call;
  call.op_type = "InstanceNormalization";
  call.opset = 6;
  call.inputs = {x, s, b};
  const auto xv = values_of<float>(x), sv = values_of<float>(s), bv = values_of<float>(b);
  std::vector<double> want(xs.numel());
  for (int64_t r = 0; r < 6; ++r) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < 5; ++i) idx.push_back(r * 5 + i);
    double m, v;
    stats(xv, idx, m, v);
    for (int64_t i : idx) want[i] = (xv[i] - m) / std::sqrt(v + double(1e-5f)) * sv[r % 3] + bv[r % 3];
  }
  expect_close(run1(call), want, 1e-5, 1e-6, "instance norm");
  call.inputs[1] = random_tensor({2}, 74);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(LayerNormalizationOp, AxesAndStatisticsOutputs) {
  const Shape xs{2, 3, 4};
  Tensor x = random_tensor(xs, 81);
  const auto xv = values_of<float>(x);
  for (int64_t axis : {0, 1, 2, -1, -2, -3}) {
    const int a = axis < 0 ? static_cast<int>(axis + 3) : static_cast<int>(axis);
    const int64_t outer = xs.numel(0, a), inner = xs.numel(a, 3);
    std::vector<int64_t> pshape(xs.begin() + a, xs.end());
    Tensor scale = random_tensor(Shape(pshape), 82), bias = random_tensor(Shape(pshape), 83);
    const auto sv = values_of<float>(scale), bv = values_of<float>(bias);
    OpCall call;
    call.op_type = "LayerNormalization";
    call.opset = 17;
    call.num_outputs = 3;
    call.attrs.set("axis", attr_int(axis));
    call.attrs.set("epsilon", attr_float(0.1f));
    call.inputs = {x, scale, bias};
    std::vector<double> want(xs.numel()), means, invs;
    for (int64_t r = 0; r < outer; ++r) {
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < inner; ++i) idx.push_back(r * inner + i);
      double m, v;
      stats(xv, idx, m, v);
      const double inv = 1.0 / std::sqrt(v + double(0.1f));
      means.push_back(m);
      invs.push_back(inv);
      for (int64_t i = 0; i < inner; ++i) want[r * inner + i] = (xv[r * inner + i] - m) * inv * sv[i] + bv[i];
    }
    auto r = run_op_threads(call, 1);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    expect_close((*r)[0], want, 1e-5, 1e-6, "Y axis " + std::to_string(axis));
    Shape stat_shape = xs;
    for (int i = a; i < 3; ++i) stat_shape[i] = 1;
    ASSERT_EQ((*r)[1].shape(), stat_shape);
    ASSERT_EQ((*r)[1].dtype(), DType::F32);
    expect_close((*r)[1], means, 1e-5, 1e-6, "Mean");
    expect_close((*r)[2], invs, 1e-5, 1e-6, "InvStdDev");
  }
}

TEST(LayerNormalizationOp, BroadcastScaleAndNoBias) {
  // Scale [3, 1] broadcasts over X [3, 2] with axis 1: each row has its own scale.
  OpCall call;
  call.op_type = "LayerNormalization";
  call.opset = 17;
  call.attrs.set("epsilon", attr_float(1e-12f));
  call.inputs = {make_tensor_f32({3, 2}, {1, 3, 5, 5, -2, 2}), make_tensor_f32({3, 1}, {1, 2, 3})};
  expect_close(run1(call), {-1, 1, 0, 0, -3, 3}, 1e-6, 1e-6, "row scales");
  call.inputs[1] = make_tensor_f32({4}, {1, 1, 1, 1});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs[1] = make_tensor_f32({2}, {1, 1});
  call.attrs.set("axis", attr_int(2));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "axis out of range";
  call.attrs.set("axis", attr_int(1));
  call.attrs.set("stash_type", attr_int(11));
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

TEST(GroupNormalizationOp, PerGroupThenPerChannelParameters) {
  const Shape xs{2, 4, 3};
  Tensor x = random_tensor(xs, 91);
  const auto xv = values_of<float>(x);
  for (int64_t opset : {18, 21}) {
    const int64_t nparams = opset >= 21 ? 4 : 2;
    Tensor s = random_tensor({nparams}, 92), b = random_tensor({nparams}, 93);
    const auto sv = values_of<float>(s), bv = values_of<float>(b);
    OpCall call;
    call.op_type = "GroupNormalization";
    call.opset = opset;
    call.attrs.set("num_groups", attr_int(2));
    call.inputs = {x, s, b};
    std::vector<double> want(xs.numel());
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t g = 0; g < 2; ++g) {
        std::vector<int64_t> idx;
        for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
          for (int64_t i = 0; i < 3; ++i) idx.push_back((n * 4 + c) * 3 + i);
        double m, v;
        stats(xv, idx, m, v);
        for (int64_t i : idx) {
          const int64_t p = opset >= 21 ? (i / 3) % 4 : g;
          want[i] = (xv[i] - m) / std::sqrt(v + double(1e-5f)) * sv[p] + bv[p];
        }
      }
    expect_close(run1(call), want, 1e-5, 1e-6, "opset " + std::to_string(opset));
    call.attrs.set("num_groups", attr_int(3));
    EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  }
}

TEST(LRNOp, ChannelWindow) {
  const Shape xs{1, 5, 2};
  Tensor x = random_tensor(xs, 101);
  const auto xv = values_of<float>(x);
  for (int64_t size : {1, 2, 3, 4}) {
    OpCall call;
    call.op_type = "LRN";
    call.opset = 13;
    call.attrs.set("size", attr_int(size));
    call.attrs.set("alpha", attr_float(0.5f));
    call.attrs.set("beta", attr_float(0.6f));
    call.attrs.set("bias", attr_float(1.5f));
    call.inputs = {x};
    std::vector<double> want;
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t i = 0; i < 2; ++i) {
        double sq = 0;
        const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2), hi = std::min<int64_t>(4, c + size / 2);
        for (int64_t k = lo; k <= hi; ++k) sq += double(xv[k * 2 + i]) * xv[k * 2 + i];
        want.push_back(xv[c * 2 + i] / std::pow(1.5 + 0.5 / size * sq, 0.6));
      }
    expect_close(run1(call), want, 1e-5, 1e-6, "size " + std::to_string(size));
  }
  OpCall call;
  call.op_type = "LRN";
  call.inputs = {x};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "size is required";
}

TEST(MeanVarianceNormalizationOp, DefaultAndCustomAxes) {
  const Shape xs{2, 3, 2, 2};
  Tensor x = random_tensor(xs, 111);
  const auto xv = values_of<float>(x);
  OpCall call;
  call.op_type = "MeanVarianceNormalization";
  call.opset = 13;
  call.inputs = {x};
  std::vector<double> want(xs.numel());
  for (int64_t c = 0; c < 3; ++c) {
    std::vector<int64_t> idx;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 4; ++i) idx.push_back((n * 3 + c) * 4 + i);
    double m, v;
    stats(xv, idx, m, v);
    for (int64_t i : idx) want[i] = (xv[i] - m) / (std::sqrt(v) + 1e-9);
  }
  expect_close(run1(call), want, 1e-5, 1e-6, "default axes");
  call.attrs.set("axes", attr_ints({-1}));
  for (int64_t r = 0; r < 12; ++r) {
    std::vector<int64_t> idx = {2 * r, 2 * r + 1};
    double m, v;
    stats(xv, idx, m, v);
    for (int64_t i : idx) want[i] = (xv[i] - m) / (std::sqrt(v) + 1e-9);
  }
  expect_close(run1(call), want, 1e-5, 1e-6, "last axis");
  call.attrs.set("axes", attr_ints({4}));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

}  // namespace
}  // namespace ignis::nn_test
