// SPDX-License-Identifier: Apache-2.0
// Epilogue cases at the edges of the x86 register tiles (4x24 and 8x32): every activation on
// FusedMatMul and FusedConv with C extents of a tile, one more and one less, whole and
// partial tile heights, depths of one and of several slices (256 and 384), and the narrow
// path (1..4 columns against prepacked weights, as in squeeze-excitation 1x1 convs); Gemm's
// alpha, beta and C forms on the same extents. Large depths give activation inputs of a few
// tens in magnitude, where exp and erf saturate.
#include "core/strings.h"
#include "kernels/cases/cases.h"

namespace ignis::kernel_cases {

namespace {

KernelCase fused_matmul(int64_t m, int64_t k, int64_t n, const FusedActivation& act) {
  KernelCase c;
  c.domain = "ai.ignis";
  c.op_type = "FusedMatMul";
  c.opset = 1;
  c.inputs = {Shape{m, k}, Shape{k, n}, Shape{n}};
  c.weight_inputs = {1};
  c.depth = k;
  set_activation(c.attrs, act);
  c.label = str_cat("A[", m, ", ", k, "] B[", k, ", ", n, "] bias ", activation_label(act));
  return c;
}

// A pointwise or 3x3 FusedConv with bias, and the residual Z when `residual`.
KernelCase fused_conv(Shape x, int64_t m, int64_t kernel, int64_t stride, bool residual,
                      const FusedActivation& act) {
  KernelCase c;
  c.domain = "ai.ignis";
  c.op_type = "FusedConv";
  c.opset = 1;
  const int64_t pad = kernel / 2;
  c.inputs = {x, Shape{m, x[1], kernel, kernel}, Shape{m}};
  c.weight_inputs = {1};
  c.depth = x[1] * kernel * kernel;
  if (stride != 1) c.attrs.set("strides", ints_attr({stride, stride}));
  if (pad != 0) c.attrs.set("pads", ints_attr({pad, pad, pad, pad}));
  if (residual) {
    const int64_t oh = (x[2] + 2 * pad - kernel) / stride + 1, ow = (x[3] + 2 * pad - kernel) / stride + 1;
    c.inputs.push_back(Shape{x[0], m, oh, ow});
  }
  set_activation(c.attrs, act);
  c.label = str_cat("X", x.str(), " W[", m, ", ", x[1], ", ", kernel, ", ", kernel, "] stride ", stride,
                    residual ? " residual " : " ", activation_label(act));
  return c;
}

KernelCase gemm(int64_t m, int64_t k, int64_t n, float alpha, float beta, Shape c_shape) {
  KernelCase c;
  c.op_type = "Gemm";
  c.opset = 13;
  c.inputs = {Shape{m, k}, Shape{k, n}, c_shape};
  c.weight_inputs = {1};
  c.depth = k;
  c.attrs.set("alpha", float_attr(alpha));
  c.attrs.set("beta", float_attr(beta));
  c.label = str_cat("A[", m, ", ", k, "] B[", k, ", ", n, "] C", c_shape.str(), " alpha=", alpha, " beta=", beta);
  return c;
}

}  // namespace

std::vector<KernelCase> fused_matmul_activation_cases() {
  // {M, K, N}: whole 8x32 tiles, one row / column past them and one short, a single row, and
  // depths past one slice of either backend (K = 300, 400, 600) up to large sums (K = 3000).
  const int64_t shapes[][3] = {{8, 37, 32},  {16, 400, 64}, {17, 5, 33}, {7, 600, 31},
                               {9, 1, 65},   {1, 300, 24},  {4, 9, 25},  {8, 3000, 33}};
  std::vector<KernelCase> cases;
  for (const auto& act : fused_activations())
    for (const auto& s : shapes) cases.push_back(fused_matmul(s[0], s[1], s[2], act));
  return cases;
}

std::vector<KernelCase> fused_conv_activation_cases() {
  struct Spec {
    Shape x;
    int64_t m, kernel, stride;
  };
  // GEMM rows = output channels, columns = output positions.
  const Spec specs[] = {
      {{1, 24, 4, 8}, 16, 1, 1},     // 16 x 32: two whole tiles high, one wide
      {{1, 20, 3, 11}, 17, 1, 1},    // 17 x 33
      {{2, 12, 8, 8}, 8, 1, 1},      // 8 x 64 per image
      {{1, 300, 5, 5}, 12, 1, 1},    // 12 x 25, depth past one slice
      {{1, 3, 16, 16}, 32, 3, 2},    // 32 x 64 from im2col (a stem convolution)
      {{1, 48, 1, 1}, 24, 1, 1},     // 24 x 1: the narrow path (squeeze-excitation)
      {{1, 40, 1, 3}, 9, 1, 1},      // 9 x 3: narrow
      {{1, 600, 2, 2}, 31, 1, 1},    // 31 x 4: narrow, three depth slices
  };
  std::vector<KernelCase> cases;
  for (const auto& act : fused_activations())
    for (const Spec& s : specs)
      for (bool residual : {false, true}) cases.push_back(fused_conv(s.x, s.m, s.kernel, s.stride, residual, act));
  return cases;
}

std::vector<KernelCase> gemm_tile_edge_cases() {
  std::vector<KernelCase> cases;
  const int64_t shapes[][3] = {{8, 20, 32}, {16, 300, 65}, {17, 7, 33}, {7, 400, 31}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[2];
    cases.push_back(gemm(m, s[1], n, 1.0f, 1.0f, Shape{n}));
    cases.push_back(gemm(m, s[1], n, 0.5f, -2.0f, Shape{m, 1}));
    cases.push_back(gemm(m, s[1], n, 1.5f, 0.25f, Shape{m, n}));
  }
  return cases;
}

}  // namespace ignis::kernel_cases
