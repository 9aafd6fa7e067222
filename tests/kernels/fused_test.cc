// SPDX-License-Identifier: Apache-2.0
// Tests for the ai.ignis fused ops (docs/ops_ai_ignis.md). Expected values come from direct
// loops over each op's definition written here, in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "core/broadcast.h"
#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

OpCall fused(const std::string& op, std::vector<Tensor> inputs, int num_outputs = 1) {
  OpCall c;
  c.op_type = op;
  c.domain = "ai.ignis";
  c.opset = 1;
  c.inputs = std::move(inputs);
  c.num_outputs = num_outputs;
  return c;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The activation table of docs/ops_ai_ignis.md with its default parameters.
double activate(const std::string& act, double x, double alpha, double beta, double lo, double hi) {
  if (act == "Relu") return x > 0 ? x : 0;
  if (act == "Clip") return std::min(std::max(x, lo), hi);
  if (act == "Sigmoid") return sigmoid(x);
  if (act == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * x + beta));
  if (act == "HardSwish") return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
  if (act == "SiLU") return x * sigmoid(x);
  if (act == "Gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "GeluTanh") return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (act == "LeakyRelu") return x >= 0 ? x : alpha * x;
  return x;
}

const std::vector<std::string> kActivations = {"",     "Relu", "Clip",     "Sigmoid",  "HardSigmoid", "HardSwish",
                                                "SiLU", "Gelu", "GeluTanh", "LeakyRelu"};

// Sets the activation attributes with non-default parameters; returns (alpha, beta, lo, hi).
std::vector<double> set_activation(OpCall& c, const std::string& act) {
  double alpha = act == "LeakyRelu" ? 0.01 : 0.2, beta = 0.5, lo = -INFINITY, hi = INFINITY;
  if (!act.empty()) c.attrs.set("activation", attr_string(act));
  if (act == "Clip") {
    lo = -0.25;
    hi = 0.5;
    c.attrs.set("activation_min", attr_float(-0.25f));
    c.attrs.set("activation_max", attr_float(0.5f));
  }
  if (act == "LeakyRelu" || act == "HardSigmoid") {
    alpha = 0.3;
    c.attrs.set("activation_alpha", attr_float(0.3f));
  }
  if (act == "HardSigmoid") {
    beta = 0.4;
    c.attrs.set("activation_beta", attr_float(0.4f));
  }
  return {alpha, beta, lo, hi};
}

// 2-D convolution, NCHW, with groups, strides, symmetric pads, dilations.
std::vector<double> naive_conv2d(const Tensor& x, const Tensor& w, const Tensor* b, int64_t group, int64_t stride,
                                 int64_t pad, int64_t dil, int64_t oh, int64_t ow) {
  const int64_t n = x.dim(0), c = x.dim(1), ih = x.dim(2), iw = x.dim(3);
  const int64_t m = w.dim(0), kh = w.dim(2), kw = w.dim(3), cg = c / group, mg = m / group;
  const float* xs = x.data_as<float>();
  const float* ws = w.data_as<float>();
  std::vector<double> y(static_cast<size_t>(n * m * oh * ow));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t mi = 0; mi < m; ++mi)
      for (int64_t yo = 0; yo < oh; ++yo)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = b ? b->data_as<float>()[mi] : 0.0;
          const int64_t g = mi / mg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t yi = yo * stride - pad + ky * dil, xi = xo * stride - pad + kx * dil;
                if (yi < 0 || yi >= ih || xi < 0 || xi >= iw) continue;
                s += static_cast<double>(xs[((ni * c + g * cg + ci) * ih + yi) * iw + xi]) *
                     ws[((mi * cg + ci) * kh + ky) * kw + kx];
              }
          y[((ni * m + mi) * oh + yo) * ow + xo] = s;
        }
  return y;
}

TEST(FusedConv, MatchesConvPlusResidualPlusEveryActivation) {
  const Tensor x = random_tensor({2, 4, 7, 6}, 1, -2, 2);
  const Tensor w = random_tensor({6, 2, 3, 3}, 2);
  const Tensor b = random_tensor({6}, 3);
  const int64_t oh = 4, ow = 3;  // stride 2, pad 1, dilation 1
  const Tensor z = random_tensor({2, 6, oh, ow}, 4);
  const std::vector<double> conv = naive_conv2d(x, w, &b, 2, 2, 1, 1, oh, ow);
  for (const auto& act : kActivations) {
    for (bool with_z : {false, true}) {
      OpCall c = fused("FusedConv", {x, w, b});
      if (with_z) c.inputs.push_back(z);
      c.attrs.set("group", attr_int(2));
      c.attrs.set("strides", attr_ints({2, 2}));
      c.attrs.set("pads", attr_ints({1, 1, 1, 1}));
      const auto p = set_activation(c, act);
      std::vector<double> want(conv.size());
      for (size_t i = 0; i < conv.size(); ++i)
        want[i] = activate(act, conv[i] + (with_z ? z.data_as<float>()[i] : 0.0), p[0], p[1], p[2], p[3]);
      for (int threads : {1, 3}) {
        auto r = run_op_threads(c, threads);
        ASSERT_TRUE(r) << r.error().to_string();
        EXPECT_EQ((*r)[0].shape(), (Shape{2, 6, oh, ow}));
        expect_close((*r)[0], want, 1e-5, 1e-5, "FusedConv activation '" + act + "'" + (with_z ? " + Z" : ""));
      }
    }
  }
}

TEST(FusedConv, WorksWithoutBiasIn1DAnd3DAndOnEmptyBatches) {
  // 1-D, no bias, dilation 2: compare against the 2-D loop with a unit height.
  const Tensor x1 = random_tensor({1, 3, 11}, 5);
  const Tensor w1 = random_tensor({2, 3, 3}, 6);
  OpCall c1 = fused("FusedConv", {x1, w1});
  c1.attrs.set("dilations", attr_ints({2}));
  c1.attrs.set("activation", attr_string("Relu"));
  Tensor x1_2d = make_tensor_f32({1, 3, 1, 11}, values_of<float>(x1));
  Tensor w1_2d = make_tensor_f32({2, 3, 1, 3}, values_of<float>(w1));
  std::vector<double> want = naive_conv2d(x1_2d, w1_2d, nullptr, 1, 1, 0, 2, 1, 7);
  for (auto& v : want) v = std::max(v, 0.0);
  expect_close(run1(c1), want, 1e-5, 1e-6, "1-D FusedConv");

  // 3-D 1x1x1 kernel: a per-voxel channel mix.
  const Tensor x3 = random_tensor({1, 2, 2, 3, 2}, 7);
  const Tensor w3 = make_tensor_f32({1, 2, 1, 1, 1}, {0.5f, -2.0f});
  OpCall c3 = fused("FusedConv", {x3, w3});
  c3.attrs.set("activation", attr_string("LeakyRelu"));
  std::vector<double> want3(12);
  for (int i = 0; i < 12; ++i) {
    const double v = 0.5 * x3.data_as<float>()[i] - 2.0 * x3.data_as<float>()[12 + i];
    want3[i] = v >= 0 ? v : 0.01 * v;
  }
  expect_close(run1(c3), want3, 1e-6, 1e-6, "3-D FusedConv");

  OpCall empty = fused("FusedConv", {random_tensor({0, 2, 4, 4}, 8), random_tensor({3, 2, 3, 3}, 9)});
  empty.attrs.set("activation", attr_string("Sigmoid"));
  EXPECT_EQ(run1(empty).shape(), (Shape{0, 3, 2, 2}));
}

TEST(FusedConv, RejectsBadActivationsResidualShapesAndDtypes) {
  const Tensor x = random_tensor({1, 2, 5, 5}, 1);
  const Tensor w = random_tensor({3, 2, 3, 3}, 2);
  OpCall bad_act = fused("FusedConv", {x, w});
  bad_act.attrs.set("activation", attr_string("Tanh"));
  EXPECT_EQ(status_of(bad_act), StatusCode::InvalidArgument);
  OpCall bad_clip = fused("FusedConv", {x, w});
  bad_clip.attrs.set("activation", attr_string("Clip"));
  bad_clip.attrs.set("activation_min", attr_float(1.0f));
  bad_clip.attrs.set("activation_max", attr_float(0.0f));
  EXPECT_EQ(status_of(bad_clip), StatusCode::InvalidArgument);
  OpCall bad_kind = fused("FusedConv", {x, w});
  bad_kind.attrs.set("activation", attr_int(1));
  EXPECT_EQ(status_of(bad_kind), StatusCode::InvalidArgument);
  // Z must have the output shape exactly: broadcasting is not part of the op.
  EXPECT_EQ(status_of(fused("FusedConv", {x, w, Tensor(), random_tensor({1, 3, 1, 1}, 3)})),
            StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("FusedConv", {x, w, random_tensor({2}, 4)})), StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("FusedConv", {x, random_tensor({3, 1, 3, 3}, 5)})), StatusCode::InvalidArgument);
  Tensor xd = Tensor::empty(DType::F64, {1, 2, 5, 5});
  Tensor wd = Tensor::empty(DType::F64, {3, 2, 3, 3});
  EXPECT_EQ(status_of(fused("FusedConv", {xd, wd})), StatusCode::Unsupported);
}

// Runs `call` on the registered kernel with id `id` (shape inference first, as run_op does).
Result<std::vector<Tensor>> run_kernel(const OpCall& call, std::string_view id, int threads) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  if (!def) return not_found(std::string("no kernel ") + std::string(id));
  // Weights (input 1) as constants, so kernels that prepack them do.
  return run_op_with(
      call, [&](const std::vector<DType>&) { return def; }, std::string(id), threads, /*only_weights_constant=*/true);
}

// A composed kernel (the best base kernel + epilogue) against the reference kernel.
void expect_composed_matches_reference(const OpCall& c, const std::string& what) {
  std::string op = c.op_type;
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const std::string id = "cpu/" + op + "_f32_composed";
  for (int threads : {1, 2}) {
    auto got = run_kernel(c, id, threads);
    auto want = run_op_threads(c, 1);
    ASSERT_TRUE(got) << got.error().to_string();
    ASSERT_TRUE(want) << want.error().to_string();
    expect_close((*got)[0], as_doubles((*want)[0]), 1e-5, 1e-5, what);
  }
}

TEST(FusedConv, ComposedKernelMatchesTheReference) {
  const Tensor x = random_tensor({2, 8, 9, 7}, 11, -2, 2);
  for (int64_t group : {1, 8}) {
    const Tensor w = random_tensor({8, 8 / group, 3, 3}, 12);
    const Tensor b = random_tensor({8}, 13);
    const Tensor z = random_tensor({2, 8, 9, 7}, 14);
    for (const std::string act : {"Relu", "SiLU", "Clip", ""}) {
      OpCall c = fused("FusedConv", {x, w, b, z});
      c.attrs.set("group", attr_int(group));
      c.attrs.set("pads", attr_ints({1, 1, 1, 1}));
      set_activation(c, act);
      expect_composed_matches_reference(c, "composed FusedConv " + act);
    }
  }
}

TEST(FusedMatMul, ComposedKernelMatchesTheReference) {
  const Tensor a = random_tensor({3, 17, 40}, 21, -2, 2);
  const Tensor b = random_tensor({40, 33}, 22);
  const Tensor bias = random_tensor({33}, 23);
  for (const std::string act : {"Gelu", "Relu", ""}) {
    OpCall c = fused("FusedMatMul", {a, b, bias});
    set_activation(c, act);
    expect_composed_matches_reference(c, "composed FusedMatMul " + act);
  }
  expect_composed_matches_reference(fused("FusedMatMul", {a, random_tensor({3, 40, 5}, 24)}), "batched B");
}

// numpy matmul with batch broadcasting of A [..., m, k] (or [k]) and B [..., k, n].
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, const Shape& out) {
  const bool a1 = a.rank() == 1;
  const int64_t k = a.shape().back(), n = b.shape().back(), m = a1 ? 1 : a.dim(a.rank() - 2);
  const int64_t batches = out.numel() / (m * n);
  const Shape batch_shape(std::span<const int64_t>(out.begin(), out.end() - (a1 ? 1 : 2)));
  auto batch_offset = [&](const Tensor& t, int64_t flat_batch) {
    // Offset of matrix `flat_batch` of `t` read broadcast to batch_shape.
    Shape tb;
    for (int i = 0; i + 2 < t.rank(); ++i) tb.push_back(t.dim(i));
    if (tb.rank() == 0) return int64_t{0};
    const auto st = broadcast_strides(tb, batch_shape);
    int64_t off = 0, rem = flat_batch;
    for (int i = batch_shape.rank() - 1; i >= 0; --i) {
      off += (rem % batch_shape[i]) * st[i];
      rem /= batch_shape[i];
    }
    return off * t.dim(t.rank() - 2) * t.shape().back();
  };
  std::vector<double> y(static_cast<size_t>(out.numel()));
  for (int64_t bi = 0; bi < batches; ++bi) {
    const float* as = a.data_as<float>() + (a1 ? 0 : batch_offset(a, bi));
    const float* bs = b.data_as<float>() + batch_offset(b, bi);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += static_cast<double>(as[i * k + p]) * bs[p * n + j];
        y[(bi * m + i) * n + j] = s;
      }
  }
  return y;
}

TEST(FusedMatMul, MatchesMatMulPlusBiasPlusEveryActivation) {
  const Tensor a = random_tensor({2, 3, 5}, 1, -2, 2);
  const Tensor b = random_tensor({5, 7}, 2);
  const Tensor bias = random_tensor({7}, 3);
  const std::vector<double> mm = naive_matmul(a, b, {2, 3, 7});
  for (const auto& act : kActivations) {
    for (bool with_bias : {false, true}) {
      OpCall c = fused("FusedMatMul", {a, b});
      if (with_bias) c.inputs.push_back(bias);
      const auto p = set_activation(c, act);
      std::vector<double> want(mm.size());
      for (size_t i = 0; i < mm.size(); ++i)
        want[i] = activate(act, mm[i] + (with_bias ? bias.data_as<float>()[i % 7] : 0.0), p[0], p[1], p[2], p[3]);
      for (int threads : {1, 2}) {
        auto r = run_op_threads(c, threads);
        ASSERT_TRUE(r) << r.error().to_string();
        EXPECT_EQ((*r)[0].shape(), (Shape{2, 3, 7}));
        expect_close((*r)[0], want, 1e-5, 1e-5, "FusedMatMul activation '" + act + "'");
      }
    }
  }
}

TEST(FusedMatMul, BroadcastsBatchesAndPromotesVectors) {
  const Tensor a = random_tensor({3, 1, 2, 4}, 4);
  const Tensor b = random_tensor({5, 4, 3}, 5);
  const Tensor bias = random_tensor({3}, 6);
  OpCall c = fused("FusedMatMul", {a, b, bias});
  c.attrs.set("activation", attr_string("Relu"));
  std::vector<double> want = naive_matmul(a, b, {3, 5, 2, 3});
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(0.0, want[i] + bias.data_as<float>()[i % 3]);
  const Tensor y = run1(c);
  EXPECT_EQ(y.shape(), (Shape{3, 5, 2, 3}));
  expect_close(y, want, 1e-5, 1e-6, "batched FusedMatMul");

  const Tensor v = random_tensor({4}, 7);
  const Tensor w = random_tensor({4, 3}, 8);
  std::vector<double> want_v = naive_matmul(v, w, {3});
  for (size_t i = 0; i < 3; ++i) want_v[i] += bias.data_as<float>()[i];
  const Tensor yv = run1(fused("FusedMatMul", {v, w, bias}));
  EXPECT_EQ(yv.shape(), (Shape{3}));
  expect_close(yv, want_v, 1e-5, 1e-6, "vector FusedMatMul");

  EXPECT_EQ(run1(fused("FusedMatMul", {random_tensor({0, 4}, 9), w, bias})).shape(), (Shape{0, 3}));
}

TEST(FusedMatMul, RejectsMismatchedShapesAndBias) {
  const Tensor a = random_tensor({2, 4}, 1);
  EXPECT_EQ(status_of(fused("FusedMatMul", {a, random_tensor({3, 2}, 2)})), StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("FusedMatMul", {a, random_tensor({4, 3}, 2), random_tensor({2}, 3)})),
            StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("FusedMatMul", {a, random_tensor({4}, 2), random_tensor({1}, 3)})),
            StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("FusedMatMul", {a, random_tensor({4, 3}, 2), random_tensor({1, 3}, 3)})),
            StatusCode::InvalidArgument);
}

TEST(IgnisGelu, ComputesTheErfAndTanhForms) {
  const Tensor x = random_tensor({3, 17}, 1, -5, 5);
  for (const std::string approx : {"", "none", "tanh"}) {
    OpCall c = fused("Gelu", {x});
    if (!approx.empty()) c.attrs.set("approximate", attr_string(approx));
    std::vector<double> want(51);
    for (int i = 0; i < 51; ++i)
      want[i] = activate(approx == "tanh" ? "GeluTanh" : "Gelu", x.data_as<float>()[i], 0, 0, 0, 0);
    expect_close(run1(c), want, 1e-6, 1e-7, "Gelu " + approx);
  }
  OpCall bad = fused("Gelu", {x});
  bad.attrs.set("approximate", attr_string("fast"));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument);
}

// LayerNormalization over the last axis of s (rows of n).
std::vector<double> naive_layer_norm(const std::vector<double>& s, int64_t n, const Tensor& gamma,
                                     const Tensor* beta, double eps) {
  std::vector<double> y(s.size());
  for (size_t r = 0; r < s.size() / n; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += s[r * n + j] / n;
    for (int64_t j = 0; j < n; ++j) var += (s[r * n + j] - mean) * (s[r * n + j] - mean) / n;
    for (int64_t j = 0; j < n; ++j)
      y[r * n + j] = (s[r * n + j] - mean) / std::sqrt(var + eps) * gamma.data_as<float>()[j] +
                     (beta ? beta->data_as<float>()[j] : 0.0);
  }
  return y;
}

TEST(SkipLayerNorm, NormalizesTheSumAndReturnsIt) {
  const Tensor x = random_tensor({2, 3, 5}, 1, -3, 3);
  const Tensor skip = random_tensor({2, 3, 5}, 2);
  const Tensor gamma = random_tensor({5}, 3, 0.5, 1.5);
  const Tensor beta = random_tensor({5}, 4);
  const Tensor bias = random_tensor({5}, 5);
  OpCall c = fused("SkipLayerNorm", {x, skip, gamma, beta, bias}, 2);
  c.attrs.set("epsilon", attr_float(1e-3f));
  std::vector<double> s(30);
  for (int i = 0; i < 30; ++i)
    s[i] = static_cast<double>(x.data_as<float>()[i]) + skip.data_as<float>()[i] + bias.data_as<float>()[i % 5];
  for (int threads : {1, 2}) {
    auto r = run_op_threads(c, threads);
    ASSERT_TRUE(r) << r.error().to_string();
    expect_close((*r)[0], naive_layer_norm(s, 5, gamma, &beta, 1e-3), 1e-5, 1e-5, "SkipLayerNorm Y");
    expect_close((*r)[1], s, 1e-6, 1e-6, "SkipLayerNorm Sum");
  }
}

TEST(SkipLayerNorm, BroadcastsSkipEitherWayWithoutBetaOrBias) {
  const Tensor x = random_tensor({1, 3, 4}, 1);
  const Tensor skip = random_tensor({2, 1, 4}, 2);
  const Tensor gamma = random_tensor({4}, 3);
  std::vector<double> s(24);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        s[(b * 3 + i) * 4 + j] = static_cast<double>(x.data_as<float>()[i * 4 + j]) + skip.data_as<float>()[b * 4 + j];
  const Tensor y = run1(fused("SkipLayerNorm", {x, skip, gamma}));
  EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
  expect_close(y, naive_layer_norm(s, 4, gamma, nullptr, 1e-5), 1e-5, 1e-5, "broadcast SkipLayerNorm");
  EXPECT_EQ(run1(fused("SkipLayerNorm", {random_tensor({0, 4}, 4), random_tensor({4}, 5), gamma})).shape(),
            (Shape{0, 4}));
}

TEST(SkipLayerNorm, RejectsParametersThatAreNotRowVectors) {
  const Tensor x = random_tensor({2, 4}, 1);
  EXPECT_EQ(status_of(fused("SkipLayerNorm", {x, x, random_tensor({2, 4}, 2)})), StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("SkipLayerNorm", {x, x, random_tensor({4}, 2), random_tensor({3}, 3)})),
            StatusCode::InvalidArgument);
  EXPECT_EQ(status_of(fused("SkipLayerNorm", {x, random_tensor({3, 4}, 2), random_tensor({4}, 2)})),
            StatusCode::InvalidArgument);
}

// Attention per the definition: per (b, h), softmax(scale * q k^T + mask) v.
std::vector<double> naive_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                                    int64_t heads, double scale) {
  const int64_t bn = q.dim(0), sq = q.dim(1), sk = k.dim(1), d = q.dim(2) / heads, dv = v.dim(2) / heads;
  const Shape scores{bn, heads, sq, sk};
  std::vector<int64_t> ms(4, 0);
  if (mask) ms = broadcast_strides(mask->shape(), scores);
  std::vector<double> y(static_cast<size_t>(bn * sq * heads * dv));
  for (int64_t b = 0; b < bn; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        std::vector<double> p(sk);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < sk; ++j) {
          double s = 0;
          for (int64_t e = 0; e < d; ++e)
            s += static_cast<double>(q.data_as<float>()[(b * sq + i) * heads * d + h * d + e]) *
                 k.data_as<float>()[(b * sk + j) * heads * d + h * d + e];
          p[j] = s * scale + (mask ? mask->data_as<float>()[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]] : 0.0);
          mx = std::max(mx, p[j]);
        }
        for (auto& x : p) sum += (x = std::exp(x - mx));
        for (int64_t e = 0; e < dv; ++e) {
          double o = 0;
          for (int64_t j = 0; j < sk; ++j) o += p[j] / sum * v.data_as<float>()[(b * sk + j) * heads * dv + h * dv + e];
          y[(b * sq + i) * heads * dv + h * dv + e] = o;
        }
      }
  return y;
}

TEST(IgnisAttention, MatchesTheDefinitionWithMasksAndScales) {
  const int64_t heads = 3;
  const Tensor q = random_tensor({2, 5, 6}, 1, -2, 2);
  const Tensor k = random_tensor({2, 4, 6}, 2, -2, 2);
  const Tensor v = random_tensor({2, 4, 9}, 3);
  // A padding mask: batch 1 cannot see its last key.
  Tensor mask = make_tensor_f32({2, 1, 1, 4}, {0, 0, 0, 0, 0, 0, 0, -3.4e38f});
  OpCall c = fused("Attention", {q, k, v, mask});
  c.attrs.set("num_heads", attr_int(heads));
  for (int threads : {1, 4}) {
    auto r = run_op_threads(c, threads);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{2, 5, 9}));
    expect_close((*r)[0], naive_attention(q, k, v, &mask, heads, 1 / std::sqrt(2.0)), 1e-5, 1e-5, "Attention");
  }
  // Causal [Sq, Sk] mask, explicit scale, no mask at all.
  const Tensor causal = random_tensor({5, 4}, 4, -3, 0);
  OpCall c2 = fused("Attention", {q, k, v, causal});
  c2.attrs.set("num_heads", attr_int(heads));
  c2.attrs.set("scale", attr_float(0.25f));
  expect_close(run1(c2), naive_attention(q, k, v, &causal, heads, 0.25), 1e-5, 1e-5, "Attention [Sq, Sk] mask");
  OpCall c3 = fused("Attention", {q, k, v});
  c3.attrs.set("num_heads", attr_int(1));
  expect_close(run1(c3), naive_attention(q, k, v, nullptr, 1, 1 / std::sqrt(6.0)), 1e-5, 1e-5, "Attention 1 head");
}

TEST(IgnisAttention, ComposedKernelMatchesTheReference) {
  const Tensor q = random_tensor({2, 7, 12}, 31, -2, 2);
  const Tensor k = random_tensor({2, 5, 12}, 32, -2, 2);
  const Tensor v = random_tensor({2, 5, 9}, 33);
  const Tensor mask = random_tensor({2, 1, 1, 5}, 34, -5, 0);
  for (bool with_mask : {false, true}) {
    OpCall c = fused("Attention", {q, k, v});
    if (with_mask) c.inputs.push_back(mask);
    c.attrs.set("num_heads", attr_int(3));
    expect_composed_matches_reference(c, with_mask ? "composed Attention, mask" : "composed Attention");
  }
}

TEST(IgnisAttention, RejectsInconsistentShapes) {
  const Tensor q = random_tensor({1, 3, 4}, 1);
  auto call = [&](std::vector<Tensor> in, int64_t heads) {
    OpCall c = fused("Attention", std::move(in));
    c.attrs.set("num_heads", attr_int(heads));
    return status_of(c);
  };
  EXPECT_EQ(call({q, q, q}, 3), StatusCode::InvalidArgument);                          // 4 % 3
  EXPECT_EQ(call({q, q, q}, 0), StatusCode::InvalidArgument);                          // heads < 1
  EXPECT_EQ(call({q, random_tensor({1, 3, 2}, 2), q}, 2), StatusCode::InvalidArgument);  // hidden differs
  EXPECT_EQ(call({q, q, random_tensor({1, 2, 4}, 3)}, 2), StatusCode::InvalidArgument);  // Sk differs
  EXPECT_EQ(call({q, q, q, random_tensor({2, 1, 1, 3}, 4)}, 2), StatusCode::InvalidArgument);  // mask grows
  EXPECT_EQ(call({random_tensor({3, 4}, 5), q, q}, 2), StatusCode::InvalidArgument);           // 2-D
  OpCall no_heads = fused("Attention", {q, q, q});
  EXPECT_EQ(status_of(no_heads), StatusCode::InvalidArgument);
}

}  // namespace
}  // namespace ignis::nn_test
