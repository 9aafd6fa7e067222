// SPDX-License-Identifier: Apache-2.0
// MatMul and Gemm cases: sizes around the x86 register tiles and cache blocks (4x24 and 8x32
// tiles, depth slices of 384 and 256, row blocks of 144, column blocks of 2040 and 2048),
// 1-sized and prime
// extents, large depth, numpy batch broadcasting (MatMul), transposes, alpha/beta and every
// broadcast form of C (Gemm).
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

KernelCase matmul(Shape a, Shape b) {
  KernelCase c;
  c.op_type = "MatMul";
  c.opset = 13;
  c.depth = a[a.rank() - 1];
  c.label = str_cat("A", a.str(), " B", b.str());
  c.inputs = {a, b};
  c.weight_inputs = {1};
  return c;
}

}  // namespace

std::vector<KernelCase> matmul_cases() {
  std::vector<KernelCase> cases;
  for (int64_t m : {1, 3, 4, 5, 8, 9, 13, 145})
    for (int64_t n : {1, 23, 24, 25, 32, 33, 49})
      for (int64_t k : {1, 7, 256, 257, 385}) cases.push_back(matmul({m, k}, {k, n}));
  cases.push_back(matmul({5, 2000}, {2000, 19}));  // six depth slices
  cases.push_back(matmul({300, 31}, {31, 33}));    // three row blocks
  cases.push_back(matmul({7, 20}, {20, 4100}));    // three column blocks
  cases.push_back(matmul({9, 3}, {3, 2049}));      // one column past a 2048 block
  cases.push_back(matmul({64, 96}, {96, 256}));
  cases.push_back(matmul({3, 0}, {0, 5}));  // empty depth: zeros
  // Batches: folded into one GEMM, broadcast either way, 1-D operands, empty batch.
  cases.push_back(matmul({2, 3, 7, 5}, {5, 9}));
  cases.push_back(matmul({7, 5}, {4, 5, 9}));
  cases.push_back(matmul({2, 1, 7, 5}, {3, 5, 9}));
  cases.push_back(matmul({3, 7, 5}, {3, 5, 9}));
  cases.push_back(matmul({8, 33, 20}, {8, 20, 18}));
  cases.push_back(matmul({1, 7, 5}, {2, 5, 3}));
  cases.push_back(matmul({5}, {5, 9}));
  cases.push_back(matmul({7, 5}, {5}));
  cases.push_back(matmul({5}, {2, 5, 3}));
  cases.push_back(matmul({17}, {17}));
  cases.push_back(matmul({0, 7, 5}, {5, 3}));
  return cases;
}

namespace {

// C = none (rank -1) or a shape that broadcasts to [M, N].
KernelCase gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, float alpha, float beta, int c_rank,
                Shape c_shape = {}, int64_t opset = 13) {
  KernelCase c;
  c.op_type = "Gemm";
  c.opset = opset;
  c.depth = k;
  const Shape a = ta ? Shape{k, m} : Shape{m, k};
  const Shape b = tb ? Shape{n, k} : Shape{k, n};
  c.inputs = {a, b};
  if (c_rank >= 0) c.inputs.push_back(c_shape);
  c.weight_inputs = {1};
  if (ta) c.attrs.set("transA", int_attr(1));
  if (tb) c.attrs.set("transB", int_attr(1));
  if (alpha != 1.0f) c.attrs.set("alpha", float_attr(alpha));
  if (beta != 1.0f) c.attrs.set("beta", float_attr(beta));
  c.label = str_cat("A", a.str(), " B", b.str(), " transA=", ta, " transB=", tb, " alpha=", alpha, " beta=", beta,
                    c_rank >= 0 ? str_cat(" C", c_shape.str()) : std::string(" no C"), " opset ", opset);
  return c;
}

}  // namespace

std::vector<KernelCase> gemm_cases() {
  std::vector<KernelCase> cases;
  const int64_t sizes[][3] = {{1, 1, 1}, {4, 24, 8}, {5, 25, 9}, {13, 47, 384}, {3, 23, 385}, {145, 49, 31},
                              {2, 1000, 64}, {37, 3, 700}};
  for (const auto& s : sizes)
    for (int t = 0; t < 4; ++t) cases.push_back(gemm(s[0], s[1], s[2], t & 1, t & 2, 1.0f, 1.0f, -1));
  // Every broadcast form of C, with alpha and beta.
  const int64_t m = 11, n = 21, k = 19;
  const Shape c_shapes[] = {Shape{}, Shape{1}, Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n}, Shape{1, 1}};
  for (const Shape& cs : c_shapes) {
    cases.push_back(gemm(m, n, k, false, true, 1.0f, 1.0f, cs.rank(), cs));
    cases.push_back(gemm(m, n, k, true, false, 0.5f, -2.0f, cs.rank(), cs));
  }
  cases.push_back(gemm(m, n, k, false, false, 1.5f, 0.0f, 2, Shape{m, n}));  // beta 0 ignores C
  cases.push_back(gemm(1, 1000, 512, false, true, 1.0f, 1.0f, 1, Shape{1000}));  // classifier head
  cases.push_back(gemm(4, 0, 3, false, false, 1.0f, 1.0f, 1, Shape{1}));         // empty output
  cases.push_back(gemm(4, 5, 0, false, false, 1.0f, 2.0f, 2, Shape{4, 5}));      // empty depth: beta * C
  cases.push_back(gemm(9, 10, 11, true, true, 1.0f, 1.0f, 2, Shape{9, 10}, 7));
  return cases;
}

std::vector<KernelCase> fused_matmul_cases() {
  std::vector<KernelCase> cases;
  const Shape shapes[][2] = {{{5, 33}, {33, 25}}, {{2, 7, 384}, {384, 49}}, {{3, 4, 9}, {3, 9, 23}}};
  for (const auto& act : fused_activations()) {
    for (const auto& s : shapes) {
      for (bool bias : {false, true}) {
        KernelCase c = matmul(s[0], s[1]);
        c.domain = "ai.ignis";
        c.op_type = "FusedMatMul";
        c.opset = 1;
        if (bias) c.inputs.push_back(Shape{s[1][s[1].rank() - 1]});
        set_activation(c.attrs, act);
        c.label += str_cat(bias ? " bias " : " no bias ", activation_label(act));
        cases.push_back(c);
      }
    }
  }
  // transA / transB: operands stored with their last two axes swapped, constant B (prepacked
  // transposed) and batched, with a bias and an activation.
  const Shape trans_shapes[][2] = {{{33, 5}, {25, 33}}, {{2, 384, 7}, {49, 384}}, {{3, 9, 4}, {3, 23, 9}},
                                   {{13, 1}, {40, 13}}};
  for (const auto& s : trans_shapes) {
    for (int t = 1; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      Shape a = s[0], b = s[1];
      if (!ta) std::swap(a[a.rank() - 1], a[a.rank() - 2]);
      if (!tb) std::swap(b[b.rank() - 1], b[b.rank() - 2]);
      KernelCase c = matmul(a, b);
      c.domain = "ai.ignis";
      c.op_type = "FusedMatMul";
      c.opset = 1;
      c.depth = ta ? a[a.rank() - 2] : a[a.rank() - 1];
      c.inputs.push_back(Shape{tb ? b[b.rank() - 2] : b[b.rank() - 1]});
      c.attrs.set("transA", int_attr(ta ? 1 : 0));
      c.attrs.set("transB", int_attr(tb ? 1 : 0));
      set_activation(c.attrs, fused_activations()[1]);
      c.label += str_cat(" transA=", ta, " transB=", tb, " bias ", activation_label(fused_activations()[1]));
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace ignis::kernel_cases
