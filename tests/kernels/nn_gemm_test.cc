// SPDX-License-Identifier: Apache-2.0
// Tests for the shared reference GEMM and the MatMul / Gemm ops. Expected values come from a
// plain triple loop in double written here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/nn_internal.h"
#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

// want[i][j] = alpha * sum_p op(A)[i][p] op(B)[p][j] + beta * C[i][j]
std::vector<double> naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                               const std::vector<float>& a, const std::vector<float>& b, double beta,
                               const std::vector<float>& c) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * m + i] : a[i * k + p];
        const double bv = tb ? b[j * k + p] : b[p * n + j];
        s += av * bv;
      }
      y[i * n + j] = alpha * s + (beta == 0.0 ? 0.0 : beta * c[i * n + j]);
    }
  return y;
}

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

class GemmRoutine : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmRoutine, MatchesNaiveLoops) {
  const GemmCase gc = GetParam();
  const auto a = random_floats(gc.m * gc.k, 1);
  const auto b = random_floats(gc.k * gc.n, 2);
  const auto c0 = random_floats(gc.m * gc.n, 3);
  const auto want = naive_gemm(gc.ta, gc.tb, gc.m, gc.n, gc.k, gc.alpha, a, b, gc.beta, c0);
  for (int threads : {1, 2, 3}) {
    std::vector<float> c = c0;
    // beta == 0 must overwrite without reading C: poison it.
    if (gc.beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
    ThreadPool pool(threads);
    kernels::ref::gemm<float>(gc.ta, gc.tb, gc.m, gc.n, gc.k, gc.alpha, a.data(), gc.ta ? gc.m : gc.k, b.data(),
                              gc.tb ? gc.k : gc.n, gc.beta, c.data(), gc.n, threads > 1 ? &pool : nullptr);
    const double tol = 1e-5 * std::sqrt(static_cast<double>(gc.k) + 1.0);
    for (size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(c[i], want[i], tol * (1.0 + std::fabs(want[i])))
          << "m=" << gc.m << " n=" << gc.n << " k=" << gc.k << " threads=" << threads << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmRoutine,
    ::testing::Values(GemmCase{1, 1, 1, false, false, 1, 0}, GemmCase{4, 8, 256, false, false, 1, 0},
                      GemmCase{3, 7, 5, false, false, 1, 0}, GemmCase{5, 9, 257, false, false, 1, 0},
                      GemmCase{129, 17, 300, false, false, 1, 0}, GemmCase{33, 2100, 13, false, false, 1, 0},
                      GemmCase{1, 77, 53, false, false, 2, 0}, GemmCase{1, 77, 53, false, true, 1, 0.5f},
                      GemmCase{1, 77, 53, true, true, 1, 0}, GemmCase{67, 45, 31, true, false, 0.5f, 2},
                      GemmCase{67, 45, 31, false, true, 1, 1}, GemmCase{67, 45, 31, true, true, -1, 0},
                      GemmCase{96, 128, 600, false, false, 1, 0}, GemmCase{7, 9, 0, false, false, 1, 0.5f},
                      GemmCase{7, 9, 0, false, false, 1, 0}));

TEST(GemmRoutine, DoubleMatchesNaiveLoops) {
  const int64_t m = 13, n = 19, k = 300;
  const auto af = random_floats(m * k, 4), bf = random_floats(k * n, 5);
  std::vector<double> a(af.begin(), af.end()), b(bf.begin(), bf.end()), c(m * n);
  kernels::ref::gemm<double>(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, c.data(), n, nullptr);
  const auto want = naive_gemm(false, false, m, n, k, 1.0, af, bf, 0.0, {});
  for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], want[i], 1e-12 * (1 + std::fabs(want[i])));
}

// ---- MatMul -------------------------------------------------------------------------------

// Batched reference with numpy broadcasting for rank >= 2 operands of the given shapes.
std::vector<double> naive_batched(const Shape& as, const Shape& bs, const Shape& ys, const std::vector<float>& a,
                                  const std::vector<float>& b) {
  const int64_t m = as[as.rank() - 2], k = as[as.rank() - 1], n = bs[bs.rank() - 1];
  const int yr = ys.rank();
  std::vector<double> y(static_cast<size_t>(ys.numel()));
  const int64_t batches = ys.numel(0, yr - 2);
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Decompose the output batch index; map to operand batch indices (1-extent dims broadcast).
    std::vector<int64_t> idx(yr - 2);
    int64_t rem = bi;
    for (int d = yr - 3; d >= 0; --d) {
      idx[d] = rem % ys[d];
      rem /= ys[d];
    }
    auto operand_batch = [&](const Shape& s) {
      int64_t off = 0;
      const int lead = s.rank() - 2;
      for (int d = 0; d < lead; ++d) {
        const int yd = d + (yr - 2 - lead);
        off = off * s[d] + (s[d] == 1 ? 0 : idx[yd]);
      }
      return off;
    };
    const int64_t ab = operand_batch(as), bb = operand_batch(bs);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(a[(ab * m + i) * k + p]) * double(b[(bb * k + p) * n + j]);
        y[(bi * m + i) * n + j] = s;
      }
  }
  return y;
}

struct MatMulCase {
  Shape a, b, y;
};

class MatMulOp : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulOp, BroadcastsBatchesLikeNumpy) {
  const MatMulCase mc = GetParam();
  OpCall call;
  call.op_type = "MatMul";
  call.opset = 13;
  call.inputs = {random_tensor(mc.a, 11), random_tensor(mc.b, 12)};
  for (int threads : {1, 2}) {
    auto r = run_op_threads(call, threads);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    const Tensor& y = (*r)[0];
    ASSERT_EQ(y.shape(), mc.y);
    const auto want =
        naive_batched(mc.a, mc.b, mc.y, values_of<float>(call.inputs[0]), values_of<float>(call.inputs[1]));
    expect_close(y, want, 1e-5, 1e-5, "MatMul " + mc.a.str() + " x " + mc.b.str());
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatMulOp,
                         ::testing::Values(MatMulCase{{3, 4}, {4, 5}, {3, 5}},
                                           MatMulCase{{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
                                           MatMulCase{{2, 3, 4}, {4, 5}, {2, 3, 5}},        // folded batch
                                           MatMulCase{{3, 4}, {2, 4, 5}, {2, 3, 5}},        // A broadcast
                                           MatMulCase{{2, 1, 3, 4}, {1, 5, 4, 6}, {2, 5, 3, 6}},
                                           MatMulCase{{7, 1, 9}, {9, 33}, {7, 1, 33}},
                                           MatMulCase{{0, 3, 4}, {4, 5}, {0, 3, 5}},
                                           MatMulCase{{3, 0}, {0, 5}, {3, 5}}));

TEST(MatMulOp, OneDimensionalOperandsDropTheirAxis) {
  OpCall call;
  call.op_type = "MatMul";
  call.inputs = {make_tensor_f32({3}, {1, 2, 3}), make_tensor_f32({2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, 1})};
  Tensor y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{2, 2}));
  expect_close(y, {4, 5, 5, 7}, 0, 0, "vector x batch");

  call.inputs = {make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6}), make_tensor_f32({3}, {1, 0, -1})};
  y = run1(call);
  ASSERT_EQ(y.shape(), (Shape{2}));
  expect_close(y, {-2, -2}, 0, 0, "matrix x vector");

  call.inputs = {make_tensor_f32({3}, {1, 2, 3}), make_tensor_f32({3}, {4, 5, 6})};
  y = run1(call);
  ASSERT_EQ(y.shape(), Shape{});
  expect_close(y, {32}, 0, 0, "dot");
}

TEST(MatMulOp, IntegerAndDoubleTypes) {
  OpCall call;
  call.op_type = "MatMul";
  call.inputs = {make_tensor<int64_t>({2, 2}, {1, 2, 3, 4}), make_tensor<int64_t>({2, 2}, {5, 6, 7, 8})};
  EXPECT_EQ(values_of<int64_t>(run1(call)), (std::vector<int64_t>{19, 22, 43, 50}));
  call.inputs = {make_tensor<int32_t>({1, 2}, {-3, 2}), make_tensor<int32_t>({2, 1}, {7, 11})};
  EXPECT_EQ(values_of<int32_t>(run1(call)), (std::vector<int32_t>{1}));
  call.inputs = {make_tensor<double>({1, 2}, {0.5, 0.25}), make_tensor<double>({2, 1}, {2, 4})};
  EXPECT_EQ(values_of<double>(run1(call)), (std::vector<double>{2.0}));
}

TEST(MatMulOp, Float16RoundTripsThroughFloat) {
  OpCall call;
  call.op_type = "MatMul";
  Tensor a = Tensor::empty(DType::F16, {2, 2}), b = Tensor::empty(DType::F16, {2, 2});
  const float av[] = {1, 2, 3, 4}, bv[] = {0.5f, 1, -1, 2};
  for (int i = 0; i < 4; ++i) {
    a.data_as<Half>()[i] = Half{float_to_half(av[i])};
    b.data_as<Half>()[i] = Half{float_to_half(bv[i])};
  }
  call.inputs = {a, b};
  Tensor y = run1(call);
  ASSERT_EQ(y.dtype(), DType::F16);
  expect_close(y, {-1.5, 5, -2.5, 11}, 0, 0, "f16");
}

TEST(MatMulOp, RejectsMismatchedInnerDimensions) {
  OpCall call;
  call.op_type = "MatMul";
  call.inputs = {random_tensor({3, 4}, 1), random_tensor({5, 2}, 2)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({2, 3, 4}, 1), random_tensor({3, 4, 2}, 2)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({3, 4}, 1), make_tensor<double>({4, 2}, std::vector<double>(8, 1.0))};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {make_tensor<int8_t>({1, 1}, {1}), make_tensor<int8_t>({1, 1}, {1})};
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

// ---- Gemm --------------------------------------------------------------------------------

TEST(GemmOp, AttributesAndBiasBroadcast) {
  const int64_t m = 5, n = 6, k = 7;
  const auto a = random_floats(m * k, 21), b = random_floats(k * n, 22);
  struct BiasCase {
    Shape shape;
  };
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const Shape& cs : {Shape{m, n}, Shape{1, n}, Shape{n}, Shape{m, 1}, Shape{}, Shape{1}}) {
        OpCall call;
        call.op_type = "Gemm";
        call.opset = 13;
        call.attrs.set("transA", attr_int(ta));
        call.attrs.set("transB", attr_int(tb));
        call.attrs.set("alpha", attr_float(0.75f));
        call.attrs.set("beta", attr_float(-1.5f));
        // Store A and B in the layout the flags say; same logical matrices.
        std::vector<float> as(a.size()), bs(b.size());
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) as[ta ? p * m + i : i * k + p] = a[i * k + p];
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) bs[tb ? j * k + p : p * n + j] = b[p * n + j];
        Tensor c = random_tensor(cs, 23);
        call.inputs = {make_tensor_f32(ta ? Shape{k, m} : Shape{m, k}, as),
                       make_tensor_f32(tb ? Shape{n, k} : Shape{k, n}, bs), c};
        std::vector<float> cfull(m * n);
        const auto cv = values_of<float>(c);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            int64_t idx = 0;
            if (cs.rank() == 2) idx = (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j);
            else if (cs.rank() == 1) idx = cs[0] == 1 ? 0 : j;
            cfull[i * n + j] = cv[idx];
          }
        const auto want = naive_gemm(false, false, m, n, k, 0.75, a, b, -1.5, cfull);
        expect_close(run1(call), want, 1e-5, 1e-5, "Gemm C " + cs.str());
      }
}

TEST(GemmOp, OptionalBiasFromOpset11) {
  OpCall call;
  call.op_type = "Gemm";
  call.opset = 11;
  call.inputs = {make_tensor_f32({1, 2}, {1, 2}), make_tensor_f32({2, 1}, {3, 4})};
  expect_close(run1(call), {11}, 0, 0, "no C");
  call.opset = 9;
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(GemmOp, RejectsBadShapes) {
  OpCall call;
  call.op_type = "Gemm";
  call.opset = 13;
  call.inputs = {random_tensor({2, 3}, 1), random_tensor({4, 5}, 2)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({2, 3}, 1), random_tensor({3, 5}, 2), random_tensor({3, 5}, 3)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.inputs = {random_tensor({2, 3, 1}, 1), random_tensor({3, 5}, 2)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(GemmOp, IntegerGemm) {
  OpCall call;
  call.op_type = "Gemm";
  call.opset = 13;
  call.inputs = {make_tensor<int32_t>({2, 2}, {1, 2, 3, 4}), make_tensor<int32_t>({2, 2}, {1, 0, 0, 1}),
                 make_tensor<int32_t>({2}, {10, 20})};
  EXPECT_EQ(values_of<int32_t>(run1(call)), (std::vector<int32_t>{11, 22, 13, 24}));
}

}  // namespace
}  // namespace ignis::nn_test
