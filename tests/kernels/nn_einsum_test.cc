// SPDX-License-Identifier: Apache-2.0
// Tests for Einsum: explicit and implicit outputs, diagonals, ellipsis broadcasting, integer
// types and malformed equations. Expected values are hand-derived or plain loops.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

OpCall einsum(const std::string& eq, std::vector<Tensor> inputs) {
  OpCall call;
  call.op_type = "Einsum";
  call.opset = 12;
  call.attrs.set("equation", attr_string(eq));
  call.inputs = std::move(inputs);
  return call;
}

TEST(EinsumOp, BatchMatMulMatchesLoops) {
  Tensor a = random_tensor({3, 2, 4}, 131), b = random_tensor({3, 4, 5}, 132);
  const auto av = values_of<float>(a), bv = values_of<float>(b);
  std::vector<double> want;
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 5; ++k) {
        double s = 0;
        for (int j = 0; j < 4; ++j) s += double(av[(n * 2 + i) * 4 + j]) * bv[(n * 4 + j) * 5 + k];
        want.push_back(s);
      }
  Tensor y = run1(einsum("bij, bjk -> bik", {a, b}));
  ASSERT_EQ(y.shape(), (Shape{3, 2, 5}));
  expect_close(y, want, 1e-5, 1e-6, "bij,bjk->bik");
}

// Reference for any equation: sums over every assignment of the labels, written here with
// labels given per operand as strings (no ellipsis).
std::vector<double> brute_force(const std::vector<std::string>& terms, const std::string& out,
                                const std::vector<Tensor>& xs) {
  std::string labels;
  std::vector<int64_t> dims;
  for (size_t t = 0; t < terms.size(); ++t)
    for (size_t a = 0; a < terms[t].size(); ++a)
      if (labels.find(terms[t][a]) == std::string::npos) {
        labels.push_back(terms[t][a]);
        dims.push_back(xs[t].dim(static_cast<int>(a)));
      }
  int64_t out_numel = 1;
  for (char c : out) out_numel *= dims[labels.find(c)];
  std::vector<double> y(static_cast<size_t>(out_numel), 0.0);
  std::vector<int64_t> idx(labels.size(), 0);
  auto at = [&](const std::string& term, const Shape& shape) {
    int64_t off = 0;
    for (size_t a = 0; a < term.size(); ++a) off = off * shape[static_cast<int>(a)] + idx[labels.find(term[a])];
    return off;
  };
  for (;;) {
    double p = 1;
    for (size_t t = 0; t < terms.size(); ++t)
      p *= load_as_double(xs[t].dtype(), xs[t].data(), at(terms[t], xs[t].shape()));
    int64_t o = 0;
    for (char c : out) o = o * dims[labels.find(c)] + idx[labels.find(c)];
    y[o] += p;
    size_t i = labels.size();
    while (i > 0 && ++idx[i - 1] == dims[i - 1]) idx[--i] = 0;
    if (i == 0) break;
  }
  return y;
}

TEST(EinsumOp, MatrixProductFormsMatchBruteForce) {
  struct Case {
    std::string a, b, out;
    Shape sa, sb;
  };
  for (const Case& c : {Case{"bhqd", "bhkd", "bhqk", {2, 3, 4, 5}, {2, 3, 6, 5}},
                        Case{"ij", "jk", "ki", {3, 4}, {4, 5}},
                        Case{"bsh", "hd", "bsd", {2, 3, 4}, {4, 5}},
                        Case{"abc", "cda", "dba", {2, 3, 4}, {4, 5, 2}},
                        Case{"ij", "ij", "", {3, 4}, {3, 4}},
                        Case{"ij", "jk", "k", {3, 4}, {4, 5}}}) {
    Tensor a = random_tensor(c.sa, 151), b = random_tensor(c.sb, 152);
    const std::string eq = c.a + "," + c.b + "->" + c.out;
    for (int threads : {1, 2}) {
      auto r = run_op_threads(einsum(eq, {a, b}), threads);
      ASSERT_TRUE(r.has_value()) << r.error().to_string();
      expect_close((*r)[0], brute_force({c.a, c.b}, c.out, {a, b}), 1e-5, 1e-6, eq);
    }
  }
}

TEST(EinsumOp, SingleOperandForms) {
  Tensor x = make_tensor_f32({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_close(run1(einsum("ij->ji", {x})), {1, 4, 2, 5, 3, 6}, 0, 0, "transpose");
  expect_close(run1(einsum("ij->i", {x})), {6, 15}, 0, 0, "row sums");
  expect_close(run1(einsum("ij->", {x})), {21}, 0, 0, "total");
  expect_close(run1(einsum("ji", {x})), {1, 4, 2, 5, 3, 6}, 0, 0, "implicit output sorts labels");
  Tensor sq = make_tensor_f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_close(run1(einsum("ii", {sq})), {15}, 0, 0, "trace");
  expect_close(run1(einsum("ii->i", {sq})), {1, 5, 9}, 0, 0, "diagonal");
}

TEST(EinsumOp, EllipsisBroadcasts) {
  // "...ij,...jk" with batch dims [2, 1] and [3]: result [2, 3, i, k].
  Tensor a = random_tensor({2, 1, 2, 3}, 141), b = random_tensor({3, 3, 2}, 142);
  const auto av = values_of<float>(a), bv = values_of<float>(b);
  std::vector<double> want;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) {
          double s = 0;
          for (int j = 0; j < 3; ++j) s += double(av[(p * 2 + i) * 3 + j]) * bv[(q * 3 + j) * 2 + k];
          want.push_back(s);
        }
  Tensor y = run1(einsum("...ij,...jk->...ik", {a, b}));
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  expect_close(y, want, 1e-5, 1e-6, "ellipsis");
  Tensor d = make_tensor_f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_close(run1(einsum("...ii ->...i", {d})), {1, 4, 5, 8}, 0, 0, "batch diagonal");
}

TEST(EinsumOp, ThreeOperandsAndIntegers) {
  Tensor a = make_tensor<int64_t>({2}, {1, 2}), b = make_tensor<int64_t>({2, 2}, {1, 2, 3, 4}),
         c = make_tensor<int64_t>({2}, {5, 6});
  // a_i b_ij c_j = 1*(1*5 + 2*6) + 2*(3*5 + 4*6) = 17 + 78
  EXPECT_EQ(values_of<int64_t>(run1(einsum("i,ij,j", {a, b, c}))), (std::vector<int64_t>{95}));
  Tensor u = make_tensor<int32_t>({2}, {3, 4}), v = make_tensor<int32_t>({3}, {1, 0, -1});
  EXPECT_EQ(values_of<int32_t>(run1(einsum("i,j->ij", {u, v}))), (std::vector<int32_t>{3, 0, -3, 4, 0, -4}));
}

TEST(EinsumOp, RejectsMalformedEquations) {
  Tensor x = random_tensor({2, 3}, 1), y = random_tensor({3, 4}, 2);
  EXPECT_EQ(status_of(einsum("ij,jk->ik", {x})), StatusCode::InvalidArgument) << "operand count";
  EXPECT_EQ(status_of(einsum("ijk->i", {x})), StatusCode::InvalidArgument) << "rank";
  EXPECT_EQ(status_of(einsum("ij,ij->ij", {x, y})), StatusCode::InvalidArgument) << "extent mismatch";
  EXPECT_EQ(status_of(einsum("ij->iz", {x})), StatusCode::InvalidArgument) << "unknown output label";
  EXPECT_EQ(status_of(einsum("ij->ii", {x})), StatusCode::InvalidArgument) << "repeated output label";
  EXPECT_EQ(status_of(einsum("i1->i", {x})), StatusCode::InvalidArgument) << "bad character";
  EXPECT_EQ(status_of(einsum("......->", {x})), StatusCode::InvalidArgument) << "two ellipses";
  OpCall no_eq = einsum("", {x});
  no_eq.attrs = AttrMap();
  EXPECT_EQ(status_of(no_eq), StatusCode::InvalidArgument) << "missing equation";
}

TEST(EinsumOp, ZeroSizedSumGivesZeros) {
  Tensor x = make_tensor_f32({2, 0}, {});
  expect_close(run1(einsum("ij->i", {x})), {0, 0}, 0, 0, "empty reduction");
}

}  // namespace
}  // namespace ignis::nn_test
