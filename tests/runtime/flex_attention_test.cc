// SPDX-License-Identifier: Apache-2.0
// FlexAttention (ai.onnx.preview, opset 1) on shapes and settings the ONNX node tests do not
// cover: grouped heads with odd sizes, bfloat16, a float16 softmax precision, score_mod and
// prob_mod subgraphs together, a fully masked row. Expected values come from the plain loops
// below, written from the spec's formula in double; tests/models/test_transformer_ops.py
// compares with the ONNX reference implementation as well.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct FlexCase {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, head = 0, v_head = 0;
  std::vector<float> q, k, v;  // [B, H, seq, size]
  double scale = 0;            // 0: 1/sqrt(head)
  // score_mod and prob_mod on element (b, h, i, j); identity by default.
  std::function<double(double, int64_t, int64_t)> score_mod = [](double s, int64_t, int64_t) { return s; };
  std::function<double(double)> prob_mod = [](double p) { return p; };
};

// Y = prob_mod(softmax(score_mod(Q K^T scale))) V, query head h reading K/V head h / (Hq / Hkv);
// a row whose every modified score is -inf gives NaN, as ONNX Softmax does.
std::vector<double> flex_oracle(const FlexCase& c) {
  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(c.head));
  std::vector<double> y;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.q_heads; ++h)
      for (int64_t i = 0; i < c.q_len; ++i) {
        const int64_t g = h / (c.q_heads / c.kv_heads);
        std::vector<double> p(static_cast<size_t>(c.kv_len));
        double mx = -kInf, sum = 0;
        for (int64_t j = 0; j < c.kv_len; ++j) {
          double s = 0;
          for (int64_t d = 0; d < c.head; ++d)
            s += double(c.q[((b * c.q_heads + h) * c.q_len + i) * c.head + d]) *
                 c.k[((b * c.kv_heads + g) * c.kv_len + j) * c.head + d];
          p[j] = c.score_mod(s * scale, i, j);
          mx = std::max(mx, p[j]);
        }
        for (double& x : p) sum += x = std::exp(x - mx);
        for (double& x : p) x = mx == -kInf ? std::nan("") : c.prob_mod(x / sum);
        for (int64_t d = 0; d < c.v_head; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < c.kv_len; ++j)
            acc += p[j] * c.v[((b * c.kv_heads + g) * c.kv_len + j) * c.v_head + d];
          y.push_back(acc);
        }
      }
  return y;
}

FlexCase flex_case(int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len, int64_t kv_len, int64_t head,
                   int64_t v_head, uint32_t seed) {
  FlexCase c;
  c.batch = batch;
  c.q_heads = q_heads;
  c.kv_heads = kv_heads;
  c.q_len = q_len;
  c.kv_len = kv_len;
  c.head = head;
  c.v_head = v_head;
  c.q = random_floats(batch * q_heads * q_len * head, seed, -1.5f, 1.5f);
  c.k = random_floats(batch * kv_heads * kv_len * head, seed + 1, -1.5f, 1.5f);
  c.v = random_floats(batch * kv_heads * kv_len * v_head, seed + 2);
  return c;
}

OpCall flex_call(FlexCase& c, DType dtype = DType::F32) {
  OpCall call;
  call.op_type = "FlexAttention";
  call.domain = "ai.onnx.preview";
  call.opset = 1;
  call.inputs = {make_rounded_tensor(dtype, {c.batch, c.q_heads, c.q_len, c.head}, c.q),
                 make_rounded_tensor(dtype, {c.batch, c.kv_heads, c.kv_len, c.head}, c.k),
                 make_rounded_tensor(dtype, {c.batch, c.kv_heads, c.kv_len, c.v_head}, c.v)};
  return call;
}

// A one-node modifier graph: out = op(x, c) for a constant c.
Attribute modifier(const char* op, Tensor c, DType x_dtype = DType::Undefined) {
  auto g = std::make_shared<ir::Graph>();
  g->name = "modifier";
  g->opsets[""] = 26;
  ValueInfo x;
  x.name = "x";
  x.dtype = x_dtype;
  g->inputs.push_back(x);
  ValueInfo out;
  out.name = "out";
  g->outputs.push_back(out);
  g->initializers["c"] = std::move(c);
  ir::Node n;
  n.name = "mod";
  n.op_type = op;
  n.inputs = {"x", "c"};
  n.outputs = {"out"};
  g->nodes.push_back(std::move(n));
  Attribute a;
  a.kind = Attribute::Kind::Graph;
  a.graph = std::move(g);
  return a;
}

TEST(FlexAttentionOp, GroupedHeadsOddSizes) {
  FlexCase c = flex_case(2, 6, 2, 5, 7, 3, 4, 11);
  const OpCall call = flex_call(c);
  auto r = run_op_threads(call, 3);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 6, 5, 4}));
  expect_close((*r)[0], flex_oracle(c), 1e-5, 1e-6, "Y");
}

TEST(FlexAttentionOp, DoubleWithExplicitScale) {
  FlexCase c = flex_case(1, 3, 3, 4, 6, 5, 2, 21);
  c.scale = double(0.3f);  // the attribute is a float
  OpCall call = flex_call(c, DType::F64);
  call.attrs.set("scale", attr_float(0.3f));
  const Tensor y = run1(call);
  EXPECT_EQ(y.dtype(), DType::F64);
  // The spec takes sqrt(scale) in float32, so double results carry float32's scale error.
  expect_close(y, flex_oracle(c), 1e-6, 1e-9, "Y double");
}

TEST(FlexAttentionOp, BFloat16GroupedHeads) {
  FlexCase c = flex_case(2, 4, 2, 3, 5, 8, 3, 31);
  const Tensor y = run1(flex_call(c, DType::BF16));
  EXPECT_EQ(y.dtype(), DType::BF16);
  expect_close(y, flex_oracle(c), 3e-2, 1e-2, "Y bfloat16");
}

TEST(FlexAttentionOp, Float16SoftmaxPrecisionOnFloatInputs) {
  FlexCase c = flex_case(1, 2, 1, 4, 9, 6, 5, 41);
  OpCall call = flex_call(c);
  call.attrs.set("softmax_precision", attr_int(10));
  const Tensor y = run1(call);
  EXPECT_EQ(y.dtype(), DType::F32);
  expect_close(y, flex_oracle(c), 5e-3, 2e-3, "Y with float16 softmax");
}

TEST(FlexAttentionOp, ScoreModAndProbModSubgraphs) {
  FlexCase c = flex_case(2, 4, 2, 3, 5, 4, 3, 51);
  c.score_mod = [](double s, int64_t, int64_t) { return s * -2.0; };
  c.prob_mod = [](double p) { return p + 0.25; };
  OpCall call = flex_call(c);
  call.attrs.set("score_mod", modifier("Mul", make_tensor_f32({}, {-2.0f})));
  call.attrs.set("prob_mod", modifier("Add", make_tensor_f32({}, {0.25f})));
  auto r = run_op_threads(call, 2);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  expect_close((*r)[0], flex_oracle(c), 1e-5, 1e-6, "Y with modifiers");
}

// An additive [L, S] mask from score_mod: row 1 masks every key and gives NaN, the others
// attend to the keys the mask leaves.
TEST(FlexAttentionOp, FullyMaskedRowGivesNaN) {
  const int64_t L = 3, S = 4;
  FlexCase c = flex_case(1, 2, 2, L, S, 4, 2, 61);
  std::vector<float> mask(L * S, 0.0f);
  for (int64_t j = 0; j < S; ++j) mask[1 * S + j] = -std::numeric_limits<float>::infinity();
  mask[0 * S + 3] = -std::numeric_limits<float>::infinity();
  c.score_mod = [&](double s, int64_t i, int64_t j) { return s + mask[i * S + j]; };
  OpCall call = flex_call(c);
  call.attrs.set("score_mod", modifier("Add", make_tensor_f32({L, S}, mask)));
  const Tensor y = run1(call);
  const std::vector<double> want = flex_oracle(c);
  EXPECT_TRUE(std::isnan(want[2]));
  expect_close(y, want, 1e-5, 1e-6, "Y with a fully masked row");
}

TEST(FlexAttentionOp, RejectsBadInputsAndModifiers) {
  FlexCase c = flex_case(1, 4, 2, 3, 5, 4, 3, 71);
  const OpCall call = flex_call(c);
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  OpCall bad = call;
  bad.inputs[0] = random_tensor({1, 3, 4}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "3-D Q";
  bad = call;
  bad.inputs[1] = random_tensor({1, 3, 5, 4}, 1);
  bad.inputs[2] = random_tensor({1, 3, 5, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "4 query heads over 3 kv heads";
  bad = call;
  bad.inputs[2] = random_tensor({1, 2, 6, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "V sequence length differs from K's";
  bad = call;
  bad.attrs.set("softmax_precision", attr_int(7));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "softmax_precision int64";
  bad = call;
  bad.attrs.set("score_mod", modifier("Mul", make_tensor_f32({}, {1.0f}), DType::F16));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "score_mod declares float16 scores";
  bad = call;
  Attribute two_inputs = modifier("Mul", make_tensor_f32({}, {1.0f}));
  auto g = std::make_shared<ir::Graph>(*two_inputs.graph);
  g->inputs.push_back(g->inputs[0]);
  g->inputs[1].name = "y";
  two_inputs.graph = g;
  bad.attrs.set("prob_mod", two_inputs);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "prob_mod with 2 inputs";
  // A modifier whose result does not keep the scores' shape fails when it runs.
  bad = call;
  bad.attrs.set("score_mod", modifier("Mul", make_tensor_f32({2, 1, 1, 1}, {1.0f, 1.0f})));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "score_mod broadcasts to a larger batch";
}

}  // namespace
}  // namespace ignis::nn_test
