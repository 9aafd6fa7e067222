// SPDX-License-Identifier: Apache-2.0
// Tests for the reduction family: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and the
// SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss losses. Expected values are derived by hand
// or by plain per-element loops written here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "testing/op_runner.h"

namespace ignis {
namespace {

using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::make_tensor_f32;
using testing::make_tensor_i64;
using testing::OpCall;
using testing::run_op;

constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T>
Tensor make_tensor(const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::empty(dtype_of<T>(), shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), shape.numel());
  for (size_t i = 0; i < values.size(); ++i) t.data_as<T>()[i] = values[i];
  return t;
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.data_as<const T>()[i];
  return v;
}

std::vector<float> random_floats(int64_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(static_cast<double>(got[i]), want[i]) << what << " at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], rtol * (1.0 + std::fabs(want[i]))) << what << " at " << i;
    }
  }
}

// Builds a Reduce* call; axes go to an attribute or to input 1 depending on the opset.
OpCall reduce_call(const std::string& op, int64_t opset, Tensor x, const std::vector<int64_t>* axes, int keepdims) {
  OpCall c;
  c.op_type = op;
  c.opset = opset;
  c.inputs.push_back(std::move(x));
  const int since = op == "ReduceSum" ? 13 : 18;
  if (axes) {
    if (opset >= since) c.inputs.push_back(make_tensor_i64(Shape{static_cast<int64_t>(axes->size())}, *axes));
    else c.attrs.set("axes", attr_ints(*axes));
  }
  if (keepdims >= 0) c.attrs.set("keepdims", attr_int(keepdims));
  return c;
}

// Naive reduction: every input element is mapped to its output element through its multi-index.
std::vector<double> naive_reduce(const std::string& op, const Shape& shape, const std::vector<float>& x,
                                 const std::vector<bool>& reduced) {
  const int rank = shape.rank();
  int64_t out_n = 1;
  for (int d = 0; d < rank; ++d)
    if (!reduced[d]) out_n *= shape[d];
  std::vector<std::vector<double>> groups(out_n);
  for (int64_t i = 0; i < shape.numel(); ++i) {
    int64_t rem = i, out = 0, mul = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = rem % shape[d];
      rem /= shape[d];
      if (!reduced[d]) {
        out += idx * mul;
        mul *= shape[d];
      }
    }
    groups[out].push_back(x[i]);
  }
  std::vector<double> res;
  for (const auto& g : groups) {
    double v = 0;
    if (op == "ReduceSum") for (double e : g) v += e;
    else if (op == "ReduceMean") { for (double e : g) v += e; v /= static_cast<double>(g.size()); }
    else if (op == "ReduceMax") { v = -INFINITY; for (double e : g) v = std::max(v, e); }
    else if (op == "ReduceMin") { v = INFINITY; for (double e : g) v = std::min(v, e); }
    else if (op == "ReduceProd") { v = 1; for (double e : g) v *= e; }
    else if (op == "ReduceL1") for (double e : g) v += std::fabs(e);
    else if (op == "ReduceL2") { for (double e : g) v += e * e; v = std::sqrt(v); }
    else if (op == "ReduceLogSum") { for (double e : g) v += e; v = std::log(v); }
    else if (op == "ReduceLogSumExp") { for (double e : g) v += std::exp(e); v = std::log(v); }
    else if (op == "ReduceSumSquare") for (double e : g) v += e * e;
    res.push_back(v);
  }
  return res;
}

const std::vector<std::string> kReduceOps = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                             "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                                             "ReduceLogSumExp", "ReduceSumSquare"};

// ---------------------------------------------------------------------------------------------
// Reduce*

TEST(Reduce, SumKeepdimsHandExample) {
  // [[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]] reduced over axis 1.
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i + 1);
  std::vector<int64_t> axes = {1};
  auto r = run_op(reduce_call("ReduceSum", 13, make_tensor_f32({3, 2, 2}, x), &axes, 1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{4, 6, 12, 14, 20, 22}));
  r = run_op(reduce_call("ReduceSum", 13, make_tensor_f32({3, 2, 2}, x), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
}

TEST(Reduce, AllOpsMatchNaiveLoopOnEveryAxisSubset) {
  const std::vector<Shape> shapes = {Shape{7}, Shape{3, 5}, Shape{2, 3, 5}, Shape{2, 1, 3, 4}, Shape{3, 1, 1, 2, 5}};
  uint32_t seed = 1;
  for (const auto& op : kReduceOps) {
    const bool positive = op == "ReduceLogSum" || op == "ReduceProd";
    for (const Shape& shape : shapes) {
      const int rank = shape.rank();
      const auto x = random_floats(shape.numel(), seed++, positive ? 0.5f : -3.0f, positive ? 1.5f : 3.0f);
      for (int mask = 0; mask < (1 << rank); ++mask) {
        for (int keepdims = 0; keepdims <= 1; ++keepdims) {
          for (int64_t opset : {11, 13, 18}) {
            std::vector<int64_t> axes;
            std::vector<bool> reduced(rank);
            for (int d = 0; d < rank; ++d) {
              reduced[d] = (mask >> d) & 1;
              // Alternate positive and negative spellings of the same axis.
              if (reduced[d]) axes.push_back(d % 2 ? d - rank : d);
            }
            if (axes.empty()) reduced.assign(rank, true);
            const std::string what = op + " opset " + std::to_string(opset) + " shape " + shape.str() + " mask " +
                                     std::to_string(mask) + " keepdims " + std::to_string(keepdims);
            auto r = run_op(reduce_call(op, opset, make_tensor_f32(shape, x), &axes, keepdims));
            ASSERT_TRUE(r.has_value()) << what << ": " << r.error().to_string();
            Shape want_shape;
            for (int d = 0; d < rank; ++d) {
              if (!reduced[d]) want_shape.push_back(shape[d]);
              else if (keepdims) want_shape.push_back(1);
            }
            EXPECT_EQ((*r)[0].shape(), want_shape) << what;
            expect_close(values_of<float>((*r)[0]), naive_reduce(op, shape, x, reduced), 1e-5, what);
          }
        }
      }
    }
  }
}

TEST(Reduce, DefaultKeepdimsIsOneAndEmptyAxesReduceAll) {
  auto r = run_op(reduce_call("ReduceMean", 18, make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6}), nullptr, -1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 1}));
  EXPECT_FLOAT_EQ(values_of<float>((*r)[0])[0], 3.5f);
  // An empty axes input also means all axes.
  std::vector<int64_t> none;
  r = run_op(reduce_call("ReduceSum", 13, make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6}), &none, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), Shape{});
  EXPECT_FLOAT_EQ(values_of<float>((*r)[0])[0], 21.0f);
}

TEST(Reduce, NoopWithEmptyAxesReturnsInput) {
  std::vector<int64_t> none;
  for (const char* op : {"ReduceSum", "ReduceSumSquare", "ReduceMax"}) {
    OpCall c = reduce_call(op, 18, make_tensor_f32({2, 2}, {1, -2, 3, 4}), &none, 1);
    c.attrs.set("noop_with_empty_axes", attr_int(1));
    auto r = run_op(c);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{2, 2})) << op;
    EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{1, -2, 3, 4})) << op;
  }
  // noop with no axes input at all behaves the same.
  OpCall c = reduce_call("ReduceSum", 13, make_tensor_f32({3}, {1, 2, 3}), nullptr, 1);
  c.attrs.set("noop_with_empty_axes", attr_int(1));
  auto r = run_op(c);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{1, 2, 3}));
}

TEST(Reduce, EmptyReductionGivesIdentity) {
  const std::vector<std::pair<std::string, double>> cases = {
      {"ReduceSum", 0.0},      {"ReduceMean", NAN},        {"ReduceMax", -INFINITY}, {"ReduceMin", INFINITY},
      {"ReduceProd", 1.0},     {"ReduceL1", 0.0},          {"ReduceL2", 0.0},        {"ReduceLogSum", -INFINITY},
      {"ReduceLogSumExp", -INFINITY}, {"ReduceSumSquare", 0.0}};
  std::vector<int64_t> axes = {1};
  for (const auto& [op, want] : cases) {
    auto r = run_op(reduce_call(op, 18, make_tensor_f32({2, 0, 3}, {}), &axes, 1));
    ASSERT_TRUE(r.has_value()) << op << ": " << r.error().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{2, 1, 3})) << op;
    expect_close(values_of<float>((*r)[0]), std::vector<double>(6, want), 0, op);
  }
  // Integer max/min of nothing: the extreme values of the type.
  std::vector<int64_t> axis0 = {0};
  auto r = run_op(reduce_call("ReduceMax", 18, make_tensor<int32_t>({0, 2}, {}), &axis0, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), std::vector<int32_t>(2, std::numeric_limits<int32_t>::lowest()));
  r = run_op(reduce_call("ReduceMin", 18, make_tensor<uint8_t>({0, 2}, {}), &axis0, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<uint8_t>((*r)[0]), (std::vector<uint8_t>{255, 255}));
}

TEST(Reduce, ZeroExtentKeptDimGivesEmptyOutput) {
  std::vector<int64_t> axes = {1};
  for (const auto& op : kReduceOps) {
    auto r = run_op(reduce_call(op, 18, make_tensor_f32({0, 3}, {}), &axes, 1));
    ASSERT_TRUE(r.has_value()) << op << ": " << r.error().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{0, 1})) << op;
  }
}

TEST(Reduce, ScalarInputReducesToScalar) {
  auto r = run_op(reduce_call("ReduceL2", 18, make_tensor_f32(Shape{}, {-3}), nullptr, 1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), Shape{});
  EXPECT_FLOAT_EQ(values_of<float>((*r)[0])[0], 3.0f);
}

TEST(Reduce, IntegerDtypesUseExactArithmetic) {
  std::vector<int64_t> axes = {1};
  // int32 sum and sum of squares.
  auto r = run_op(reduce_call("ReduceSum", 13, make_tensor<int32_t>({2, 3}, {1, -2, 3, 40000, 50000, 60000}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), (std::vector<int32_t>{2, 150000}));
  // int64 values beyond double's 53-bit mantissa stay exact.
  const int64_t big = (int64_t{1} << 60) + 1;
  r = run_op(reduce_call("ReduceSum", 13, make_tensor<int64_t>({1, 3}, {big, 1, -2}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), std::vector<int64_t>{big - 1});
  // Integer mean truncates toward zero, like numpy's mean with an integer dtype.
  r = run_op(reduce_call("ReduceMean", 18, make_tensor<int64_t>({2, 2}, {1, 2, -1, -2}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, -1}));
  r = run_op(reduce_call("ReduceMax", 18, make_tensor<uint8_t>({2, 3}, {1, 200, 3, 9, 8, 7}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<uint8_t>((*r)[0]), (std::vector<uint8_t>{200, 9}));
  r = run_op(reduce_call("ReduceL1", 18, make_tensor<int8_t>({1, 3}, {-5, 4, -3}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int8_t>((*r)[0]), std::vector<int8_t>{12});
  r = run_op(reduce_call("ReduceProd", 18, make_tensor<int32_t>({1, 4}, {-2, 3, 5, 7}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), std::vector<int32_t>{-210});
  r = run_op(reduce_call("ReduceL2", 18, make_tensor<int32_t>({1, 2}, {3, 4}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), std::vector<int32_t>{5});
}

TEST(Reduce, HalfAndDoubleInputs) {
  std::vector<int64_t> axes = {0};
  std::vector<Half> h;
  for (float v : {0.5f, 1.25f, 2.0f, -4.0f}) h.push_back(Half{float_to_half(v)});
  auto r = run_op(reduce_call("ReduceSum", 13, make_tensor<Half>({4}, h), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::F16);
  EXPECT_FLOAT_EQ(half_to_float(values_of<Half>((*r)[0])[0].bits), -0.25f);
  r = run_op(reduce_call("ReduceProd", 18, make_tensor<double>({3}, {1.5, -2.0, 1e200}), &axes, 1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), Shape{1});
  EXPECT_DOUBLE_EQ(values_of<double>((*r)[0])[0], -3e200);
}

TEST(Reduce, BoolMaxMinAreAnyAll) {
  std::vector<int64_t> axes = {1};
  auto x = make_tensor<bool>({3, 2}, {true, false, false, false, true, true});
  auto r = run_op(reduce_call("ReduceMax", 20, x, &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<bool>((*r)[0]), (std::vector<bool>{true, false, true}));
  r = run_op(reduce_call("ReduceMin", 20, x, &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<bool>((*r)[0]), (std::vector<bool>{false, false, true}));
  r = run_op(reduce_call("ReduceSum", 20, x, &axes, 0));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::Unsupported);
}

TEST(Reduce, LogSumExpIsStableAndHandlesInfinities) {
  std::vector<int64_t> axes = {1};
  auto r = run_op(reduce_call("ReduceLogSumExp", 18,
                              make_tensor_f32({3, 2}, {1000, 1000, -kInf, -kInf, kInf, 1}), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), {1000.0 + std::log(2.0), -INFINITY, INFINITY}, 1e-6, "lse");
}

TEST(Reduce, MaxMinPropagateNan) {
  std::vector<int64_t> axes = {1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    auto r = run_op(reduce_call(op, 18, make_tensor_f32({2, 3}, {1, nan, 2, 4, 5, 6}), &axes, 0));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    auto v = values_of<float>((*r)[0]);
    EXPECT_TRUE(std::isnan(v[0])) << op;
    EXPECT_FALSE(std::isnan(v[1])) << op;
  }
}

TEST(Reduce, LargeInputUsesAllOutputs) {
  // Big enough to be split across threads when a pool is present; checks every output.
  const Shape shape{64, 37, 33};
  const auto x = random_floats(shape.numel(), 7);
  std::vector<int64_t> axes = {1};
  auto r = run_op(reduce_call("ReduceMean", 18, make_tensor_f32(shape, x), &axes, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), naive_reduce("ReduceMean", shape, x, {false, true, false}), 1e-5, "mean");
}

TEST(Reduce, RejectsBadAxesAndAttributes) {
  auto x = make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  std::vector<int64_t> out_of_range = {2};
  auto r = run_op(reduce_call("ReduceSum", 13, x, &out_of_range, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  std::vector<int64_t> too_negative = {-3};
  r = run_op(reduce_call("ReduceMax", 11, x, &too_negative, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  std::vector<int64_t> duplicate = {1, -1};
  r = run_op(reduce_call("ReduceMean", 18, x, &duplicate, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  std::vector<int64_t> axes = {1};
  r = run_op(reduce_call("ReduceMean", 18, x, &axes, 2));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  // From opset 18 axes is an input; the attribute is not valid any more.
  OpCall c = reduce_call("ReduceMean", 18, x, nullptr, 1);
  c.attrs.set("axes", attr_ints({1}));
  r = run_op(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  // Before opset 13 ReduceSum has no second input.
  c = reduce_call("ReduceSum", 11, x, nullptr, 1);
  c.inputs.push_back(make_tensor_i64({1}, {1}));
  r = run_op(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  // Axes must be an integer tensor.
  c = reduce_call("ReduceSum", 13, x, nullptr, 1);
  c.inputs.push_back(make_tensor_f32({1}, {1}));
  r = run_op(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// ArgMax, ArgMin

OpCall arg_call(const std::string& op, Tensor x, int64_t axis, int keepdims, int select_last) {
  OpCall c;
  c.op_type = op;
  c.opset = 13;
  c.inputs.push_back(std::move(x));
  c.attrs.set("axis", attr_int(axis));
  c.attrs.set("keepdims", attr_int(keepdims));
  c.attrs.set("select_last_index", attr_int(select_last));
  return c;
}

TEST(ArgReduce, FirstAndLastIndexOfTies) {
  auto x = make_tensor_f32({2, 3}, {2, 5, 5, 1, 1, 0});
  auto r = run_op(arg_call("ArgMax", x, 1, 1, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::I64);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, 0}));
  r = run_op(arg_call("ArgMax", x, -1, 0, 1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2}));
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{2, 1}));
  r = run_op(arg_call("ArgMin", x, 0, 0, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, 1, 1}));
  r = run_op(arg_call("ArgMin", x, 1, 0, 1));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{0, 2}));
}

TEST(ArgReduce, MiddleAxisMatchesNaiveLoop) {
  const Shape shape{3, 7, 5};
  const auto x = random_floats(shape.numel(), 11);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    auto r = run_op(arg_call(op, make_tensor_f32(shape, x), 1, 0, 0));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    auto got = values_of<int64_t>((*r)[0]);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k) {
        int64_t best = 0;
        for (int64_t j = 1; j < 7; ++j) {
          const float v = x[(i * 7 + j) * 5 + k], b = x[(i * 7 + best) * 5 + k];
          if (std::string(op) == "ArgMax" ? v > b : v < b) best = j;
        }
        EXPECT_EQ(got[i * 5 + k], best) << op << " at " << i << "," << k;
      }
  }
}

TEST(ArgReduce, IntegerInputAndDefaultAxis) {
  OpCall c;
  c.op_type = "ArgMax";
  c.opset = 11;
  c.inputs.push_back(make_tensor<int32_t>({3, 2}, {1, 9, 7, 2, 3, 4}));
  auto r = run_op(c);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, 0}));
}

TEST(ArgReduce, RejectsBadAxisAndEmptyAxis) {
  auto r = run_op(arg_call("ArgMax", make_tensor_f32({2, 2}, {1, 2, 3, 4}), 2, 1, 0));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  r = run_op(arg_call("ArgMin", make_tensor_f32({2, 0}, {}), 1, 1, 0));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  // An empty axis is fine when the output is empty anyway.
  r = run_op(arg_call("ArgMin", make_tensor_f32({0, 0}, {}), 1, 1, 0));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{0, 1}));
}

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

OpCall softmax_call(const std::string& op, int64_t opset, Tensor x, const int64_t* axis) {
  OpCall c;
  c.op_type = op;
  c.opset = opset;
  c.inputs.push_back(std::move(x));
  if (axis) c.attrs.set("axis", attr_int(*axis));
  return c;
}

// Softmax (or log-softmax) of groups: element i belongs to group (i / (n*inner), i % inner),
// position (i / inner) % n.
std::vector<double> naive_softmax(const std::vector<float>& x, int64_t n, int64_t inner, bool log) {
  std::vector<double> out(x.size());
  const int64_t outer = static_cast<int64_t>(x.size()) / (n * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<double>(x[(o * n + j) * inner + i]));
      for (int64_t j = 0; j < n; ++j) {
        const double v = x[(o * n + j) * inner + i];
        out[(o * n + j) * inner + i] = log ? v - std::log(sum) : std::exp(v) / sum;
      }
    }
  return out;
}

TEST(Softmax, EachAxisFromOpset13MatchesNaiveLoop) {
  const Shape shape{3, 4, 5};
  const auto x = random_floats(shape.numel(), 3);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const bool log = std::string(op) == "LogSoftmax";
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      auto r = run_op(softmax_call(op, 13, make_tensor_f32(shape, x), &axis));
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      expect_close(values_of<float>((*r)[0]), naive_softmax(x, shape[a], shape.numel(a + 1, 3), log), 1e-6,
                   std::string(op) + " axis " + std::to_string(axis));
    }
  }
  // Default axis is -1.
  auto r = run_op(softmax_call("Softmax", 13, make_tensor_f32(shape, x), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), naive_softmax(x, 5, 1, false), 1e-6, "default axis");
}

TEST(Softmax, BeforeOpset13CoercesTo2D) {
  const Shape shape{2, 3, 4};
  const auto x = random_floats(shape.numel(), 5);
  // Default axis 1: rows of 3*4 elements.
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const bool log = std::string(op) == "LogSoftmax";
    auto r = run_op(softmax_call(op, 11, make_tensor_f32(shape, x), nullptr));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    expect_close(values_of<float>((*r)[0]), naive_softmax(x, 12, 1, log), 1e-6, op);
    int64_t axis0 = 0;
    r = run_op(softmax_call(op, 1, make_tensor_f32(shape, x), &axis0));
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    expect_close(values_of<float>((*r)[0]), naive_softmax(x, 24, 1, log), 1e-6, op);
  }
  // Hardmax coerced: one 1 per row of 12.
  auto r = run_op(softmax_call("Hardmax", 11, make_tensor_f32(shape, x), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  auto v = values_of<float>((*r)[0]);
  for (int row = 0; row < 2; ++row) {
    float sum = 0;
    for (int j = 0; j < 12; ++j) sum += v[row * 12 + j];
    EXPECT_EQ(sum, 1.0f);
  }
}

TEST(Softmax, LargeInputsStayFinite) {
  auto r = run_op(softmax_call("Softmax", 13, make_tensor_f32({1, 3}, {10000, 10001, 10002}), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), s = 1 + e1 + e2;
  expect_close(values_of<float>((*r)[0]), {e2 / s, e1 / s, 1 / s}, 1e-6, "softmax");
  r = run_op(softmax_call("LogSoftmax", 13, make_tensor_f32({1, 3}, {10000, 10001, 10002}), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), {-2 - std::log(s), -1 - std::log(s), -std::log(s)}, 1e-6, "logsoftmax");
}

TEST(Softmax, HardmaxPicksFirstMaximum) {
  int64_t axis = 0;
  auto r = run_op(softmax_call("Hardmax", 13, make_tensor_f32({3, 2}, {1, 4, 3, 4, 3, 2}), &axis));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{0, 1, 1, 0, 0, 0}));
}

TEST(Softmax, HalfAndZeroSizedInputs) {
  std::vector<Half> h;
  for (float v : {0.0f, 0.0f}) h.push_back(Half{float_to_half(v)});
  auto r = run_op(softmax_call("Softmax", 13, make_tensor<Half>({2}, h), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  for (Half v : values_of<Half>((*r)[0])) EXPECT_EQ(half_to_float(v.bits), 0.5f);
  r = run_op(softmax_call("Softmax", 13, make_tensor_f32({0, 3}, {}), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{0, 3}));
  r = run_op(softmax_call("LogSoftmax", 13, make_tensor_f32({3, 0}, {}), nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
}

TEST(Softmax, RejectsBadAxisAndDtype) {
  int64_t axis = 2;
  auto r = run_op(softmax_call("Softmax", 13, make_tensor_f32({2, 2}, {1, 2, 3, 4}), &axis));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  axis = 3;
  r = run_op(softmax_call("LogSoftmax", 11, make_tensor_f32({2, 2}, {1, 2, 3, 4}), &axis));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  r = run_op(softmax_call("Softmax", 13, make_tensor<int32_t>({2}, {1, 2}), nullptr));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::Unsupported);
}

// ---------------------------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss

OpCall loss_call(const std::string& op, Tensor x, Tensor labels, Tensor weights, const std::string& reduction,
                 const int64_t* ignore_index, int num_outputs = 1) {
  OpCall c;
  c.op_type = op;
  c.opset = 13;
  c.inputs = {std::move(x), std::move(labels)};
  if (weights.defined()) c.inputs.push_back(std::move(weights));
  c.attrs.set("reduction", attr_string(reduction));
  if (ignore_index) c.attrs.set("ignore_index", attr_int(*ignore_index));
  c.num_outputs = num_outputs;
  return c;
}

TEST(Loss, NllMatchesSpecExamples) {
  // The three examples of the ONNX NegativeLogLikelihoodLoss documentation.
  const std::vector<float> x = {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2};
  const auto target = make_tensor_i64({2, 2}, {2, 1, 0, 2});
  const auto weight = make_tensor_f32({3}, {0.2f, 0.3f, 0.1f});
  auto r = run_op(loss_call("NegativeLogLikelihoodLoss", make_tensor_f32({2, 3, 2}, x), target, Tensor(), "none", nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{-3, -2, -0, -2}));
  r = run_op(loss_call("NegativeLogLikelihoodLoss", make_tensor_f32({2, 3, 2}, x), target, weight, "sum", nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), Shape{});
  EXPECT_NEAR(values_of<float>((*r)[0])[0], -1.1, 1e-6);
  r = run_op(loss_call("NegativeLogLikelihoodLoss", make_tensor_f32({2, 3, 2}, x), target, weight, "mean", nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_NEAR(values_of<float>((*r)[0])[0], -1.1 / 0.7, 1e-6);
}

TEST(Loss, NllIgnoreIndexDropsSamplesFromTheMean) {
  const auto x = make_tensor_f32({3, 2}, {-1, -2, -3, -4, -5, -6});
  const auto target = make_tensor_i64({3}, {0, 7, 1});  // 7 is ignored and outside [0, C)
  const int64_t ii = 7;
  auto r = run_op(loss_call("NegativeLogLikelihoodLoss", x, target, Tensor(), "mean", &ii));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_NEAR(values_of<float>((*r)[0])[0], (1.0 + 6.0) / 2.0, 1e-6);
  r = run_op(loss_call("NegativeLogLikelihoodLoss", x, target, make_tensor_f32({2}, {2, 3}), "mean", &ii));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_NEAR(values_of<float>((*r)[0])[0], (1.0 * 2 + 6.0 * 3) / 5.0, 1e-6);
  r = run_op(loss_call("NegativeLogLikelihoodLoss", x, target, Tensor(), "none", &ii));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0]), (std::vector<float>{1, 0, 6}));
}

TEST(Loss, SoftmaxCrossEntropyWithLogProbAndWeights) {
  // N=2, C=3, d1=2; int32 labels.
  const std::vector<float> xv = random_floats(12, 21);
  const auto labels = make_tensor<int32_t>({2, 2}, {0, 2, 1, 1});
  const std::vector<float> w = {0.5f, 1.0f, 2.0f};
  // log-softmax over C for each (n, d), by hand.
  std::vector<double> lp(12);
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      double s = 0;
      for (int c = 0; c < 3; ++c) s += std::exp(static_cast<double>(xv[(n * 3 + c) * 2 + d]));
      for (int c = 0; c < 3; ++c) lp[(n * 3 + c) * 2 + d] = xv[(n * 3 + c) * 2 + d] - std::log(s);
    }
  const int lab[4] = {0, 2, 1, 1};
  double sum = 0, wsum = 0;
  std::vector<double> per(4);
  for (int n = 0; n < 2; ++n)
    for (int d = 0; d < 2; ++d) {
      const int c = lab[n * 2 + d];
      per[n * 2 + d] = -lp[(n * 3 + c) * 2 + d] * w[c];
      sum += per[n * 2 + d];
      wsum += w[c];
    }
  auto r = run_op(loss_call("SoftmaxCrossEntropyLoss", make_tensor_f32({2, 3, 2}, xv), labels,
                            make_tensor_f32({3}, w), "mean", nullptr, 2));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].shape(), Shape{});
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 3, 2}));
  expect_close(values_of<float>((*r)[0]), {sum / wsum}, 1e-6, "mean loss");
  expect_close(values_of<float>((*r)[1]), lp, 1e-6, "log_prob");
  r = run_op(loss_call("SoftmaxCrossEntropyLoss", make_tensor_f32({2, 3, 2}, xv), labels, make_tensor_f32({3}, w),
                       "none", nullptr));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), per, 1e-6, "none loss");
  // Ignoring class 1 removes samples (1, 0) and (1, 1).
  const int64_t ii = 1;
  r = run_op(loss_call("SoftmaxCrossEntropyLoss", make_tensor_f32({2, 3, 2}, xv), labels, Tensor(), "sum", &ii));
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close(values_of<float>((*r)[0]), {-lp[0] - lp[5]}, 1e-6, "sum loss");
}

TEST(Loss, RejectsBadLabelsAndShapes) {
  const auto x = make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}) {
    auto r = run_op(loss_call(op, x, make_tensor_i64({2}, {0, 3}), Tensor(), "mean", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::OutOfRange) << op;
    r = run_op(loss_call(op, x, make_tensor_i64({2}, {0, -1}), Tensor(), "mean", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::OutOfRange) << op;
    r = run_op(loss_call(op, x, make_tensor_i64({3}, {0, 1, 2}), Tensor(), "mean", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << op;
    r = run_op(loss_call(op, x, make_tensor_i64({2}, {0, 1}), make_tensor_f32({2}, {1, 1}), "mean", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << op;
    r = run_op(loss_call(op, x, make_tensor_i64({2}, {0, 1}), Tensor(), "average", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << op;
    r = run_op(loss_call(op, x, make_tensor_f32({2}, {0, 1}), Tensor(), "mean", nullptr));
    ASSERT_FALSE(r.has_value()) << op;
    EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << op;
  }
}

}  // namespace
}  // namespace ignis
