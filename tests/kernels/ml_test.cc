// SPDX-License-Identifier: Apache-2.0
// Tests for the ai.onnx.ml reference kernels: LinearClassifier's post_transforms, binary
// scoring and string labels, LinearRegressor, Normalizer, Scaler, Binarizer,
// ArrayFeatureExtractor. Expected values come from plain scalar formulas written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

OpCall ml_call(const std::string& op, Tensor x) {
  OpCall call;
  call.op_type = op;
  call.domain = kMl;
  call.opset = 1;
  call.inputs = {std::move(x)};
  return call;
}

// Three features, three classes, four rows.
const std::vector<float> kX = {0.5f, -1.0f, 2.0f, 0.0f, 0.0f, 0.0f, -3.0f, 1.5f, 0.25f, 1.0f, 1.0f, 1.0f};
const std::vector<float> kCoef = {1.0f, 0.5f, -0.25f, -1.0f, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
const std::vector<float> kIcp = {0.1f, -0.2f, 0.0f};

std::vector<double> raw_scores(int64_t row) {
  std::vector<double> s(3);
  for (int c = 0; c < 3; ++c) {
    s[c] = kIcp[c];
    for (int j = 0; j < 3; ++j) s[c] += static_cast<double>(kX[row * 3 + j]) * kCoef[c * 3 + j];
  }
  return s;
}

std::vector<double> transformed(const std::string& pt, std::vector<double> s) {
  if (pt == "LOGISTIC") {
    for (double& v : s) v = 1.0 / (1.0 + std::exp(-v));
  } else if (pt == "SOFTMAX") {
    double m = s[0], sum = 0;
    for (double v : s) m = std::max(m, v);
    for (double& v : s) sum += (v = std::exp(v - m));
    for (double& v : s) v /= sum;
  } else if (pt == "SOFTMAX_ZERO") {
    double m = s[0], sum = 0;
    for (double v : s) m = std::max(m, v);
    for (double& v : s) sum += (v = v == 0.0 ? 0.0 : std::exp(v - m));
    for (double& v : s) v /= sum;
  }
  return s;
}

class LinearClassifierPostTransform : public ::testing::TestWithParam<std::string> {};

TEST_P(LinearClassifierPostTransform, MatchesScalarFormula) {
  const std::string pt = GetParam();
  OpCall call = ml_call("LinearClassifier", make_tensor_f32({4, 3}, kX));
  call.attrs.set("coefficients", attr_floats(kCoef));
  call.attrs.set("intercepts", attr_floats(kIcp));
  call.attrs.set("classlabels_ints", attr_ints({10, 20, 30}));
  call.attrs.set("post_transform", attr_string(pt));
  call.num_outputs = 2;
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  std::vector<double> want;
  std::vector<int64_t> want_labels;
  for (int64_t i = 0; i < 4; ++i) {
    const std::vector<double> s = raw_scores(i);
    want_labels.push_back(10 * (1 + (std::max_element(s.begin(), s.end()) - s.begin())));
    for (double v : transformed(pt, s)) want.push_back(v);
  }
  EXPECT_EQ(values_of<int64_t>((*r)[0]), want_labels);
  expect_close((*r)[1], want, 1e-6, 1e-6, "LinearClassifier " + pt);
}

INSTANTIATE_TEST_SUITE_P(Ml, LinearClassifierPostTransform,
                         ::testing::Values("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"));

TEST(LinearClassifier, BinaryScoresFollowOnnxruntime) {
  OpCall call = ml_call("LinearClassifier", make_tensor_f32({3, 2}, {1.0f, 0.0f, 0.0f, 1.0f, 0.1f, 0.2f}));
  call.attrs.set("coefficients", attr_floats({1.0f, -2.0f}));
  call.attrs.set("intercepts", attr_floats({0.5f}));
  call.attrs.set("classlabels_ints", attr_ints({3, 7}));
  call.num_outputs = 2;
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{7, 3, 7}));
  expect_close((*r)[1], {1 - 1.5, 1.5, 1 + 1.5, -1.5, 1 - 0.2, 0.2}, 1e-6, 1e-6, "binary NONE");
}

TEST(LinearClassifier, StringLabelsNameTheClasses) {
  // The rows of BinaryScoresFollowOnnxruntime, then three classes scored by kCoef.
  OpCall call = ml_call("LinearClassifier", make_tensor_f32({3, 2}, {1.0f, 0.0f, 0.0f, 1.0f, 0.1f, 0.2f}));
  call.attrs.set("coefficients", attr_floats({1.0f, -2.0f}));
  call.attrs.set("intercepts", attr_floats({0.5f}));
  call.attrs.set("classlabels_strings", attr_strings({"neg", "pos"}));
  call.num_outputs = 2;
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::String);
  EXPECT_EQ(values_of<std::string>((*r)[0]), (std::vector<std::string>{"pos", "neg", "pos"}));

  OpCall multi = ml_call("LinearClassifier", make_tensor_f32({4, 3}, kX));
  multi.attrs.set("coefficients", attr_floats(kCoef));
  multi.attrs.set("intercepts", attr_floats(kIcp));
  multi.attrs.set("classlabels_strings", attr_strings({"a", "b", "c"}));
  r = run_op(multi);
  ASSERT_TRUE(r) << r.error().to_string();
  std::vector<std::string> want;
  for (int64_t row = 0; row < 4; ++row) {
    const std::vector<double> s = raw_scores(row);
    want.push_back(std::string(1, static_cast<char>('a' + (std::max_element(s.begin(), s.end()) - s.begin()))));
  }
  EXPECT_EQ(values_of<std::string>((*r)[0]), want);

  multi.attrs.set("classlabels_ints", attr_ints({1, 2, 3}));
  expect_op_error(multi, "exactly one of");
}

TEST(LinearRegressor, TwoTargets) {
  OpCall call = ml_call("LinearRegressor", make_tensor_f32({2, 2}, {1.0f, 2.0f, -1.0f, 0.5f}));
  call.attrs.set("coefficients", attr_floats({1.0f, 2.0f, 3.0f, -1.0f}));
  call.attrs.set("intercepts", attr_floats({0.5f, -0.5f}));
  call.attrs.set("targets", attr_int(2));
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {5.5, 0.5, 0.5, -4.0}, 1e-6, 1e-6, "LinearRegressor");
}

TEST(Normalizer, MaxL1L2) {
  const std::vector<float> x = {-4.0f, 1.0f, 2.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"MAX", {-2.0, 0.5, 1.0, 0, 0, 0}},
      {"L1", {-4.0 / 7, 1.0 / 7, 2.0 / 7, 0, 0, 0}},
      {"L2", {-4.0 / std::sqrt(21.0), 1.0 / std::sqrt(21.0), 2.0 / std::sqrt(21.0), 0, 0, 0}}};
  for (const auto& c : cases) {
    OpCall call = ml_call("Normalizer", make_tensor_f32({2, 3}, x));
    call.attrs.set("norm", attr_string(c.first));
    auto r = run_op(call);
    ASSERT_TRUE(r) << r.error().to_string();
    expect_close((*r)[0], c.second, 1e-6, 1e-6, "Normalizer " + c.first);
  }
}

TEST(Scaler, PerFeatureAndShared) {
  OpCall call = ml_call("Scaler", make_tensor_f32({2, 2}, {1.0f, 2.0f, 3.0f, 4.0f}));
  call.attrs.set("offset", attr_floats({1.0f, -1.0f}));
  call.attrs.set("scale", attr_floats({2.0f}));
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {0.0, 6.0, 4.0, 10.0}, 1e-6, 1e-6, "Scaler");
}

TEST(Binarizer, StrictlyAboveThreshold) {
  OpCall call = ml_call("Binarizer", make_tensor_f32({4}, {0.5f, 0.6f, -1.0f, 3.0f}));
  call.attrs.set("threshold", attr_float(0.5f));
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {0.0, 1.0, 0.0, 1.0}, 0, 0, "Binarizer");
}

TEST(ArrayFeatureExtractor, GathersLastAxisAndChecksRange) {
  OpCall call = ml_call("ArrayFeatureExtractor", make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  call.inputs.push_back(make_tensor_i64({2}, {2, 0}));
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), Shape({2, 2}));
  expect_close((*r)[0], {3, 1, 6, 4}, 0, 0, "ArrayFeatureExtractor");
  call.inputs[1] = make_tensor_i64({1}, {3});
  EXPECT_FALSE(run_op(call));
}

}  // namespace
}  // namespace ignis::nn_test
