// SPDX-License-Identifier: Apache-2.0
// Tests for LinearAttention and CausalConvWithState (opset 27) on shapes the ONNX node tests do
// not cover: odd sizes, grouped and multi-query heads, per-head and per-key decay, beta of width
// 1, a sequence shorter than the convolution's carry, k = 1, empty sequences, 16-bit types.
// Expected values come from the plain loops below, written from the ONNX spec's formulas in
// double.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

// A call of an opset-27 op with both outputs.
OpCall opset27_call(const char* op_type) {
  OpCall call;
  call.op_type = op_type;
  call.opset = 27;
  call.num_outputs = 2;
  return call;
}

// ---- LinearAttention oracle -------------------------------------------------------------------

struct LinCase {
  int64_t batch = 0, seq = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  std::string rule;
  std::vector<float> q, k, v;  // packed [B, T, H * D]
  std::vector<float> past;     // [B, Hkv, dk, dv]; empty: zeros
  std::vector<float> decay;    // [B, T, decay_width]
  std::vector<float> beta;     // [B, T, beta_width]
  int64_t decay_width = 0, beta_width = 0;
  float scale = 0.0f;  // 0: 1/sqrt(dk)
};

struct LinWant {
  std::vector<double> out;    // [B, T, Hq * dv]
  std::vector<double> state;  // [B, Hkv, dk, dv]
};

// Per token, from the spec: with D = diag(exp(g_t)) S_{t-1} (D = S_{t-1} without gating),
//   S_t = D + k_t (x) u_t,  u_t = beta_t (v_t - D^T k_t) for the delta rules, v_t otherwise;
//   o_t = scale q_t^T S_t, query head h reading key/value head h / (Hq / Hkv).
LinWant linear_attention_oracle(const LinCase& c) {
  const bool gated = c.rule == "gated" || c.rule == "gated_delta";
  const bool delta = c.rule == "delta" || c.rule == "gated_delta";
  const double scale = c.scale != 0.0f ? c.scale : 1.0 / std::sqrt(double(c.dk));
  LinWant w;
  w.state.assign(static_cast<size_t>(c.batch * c.kv_heads * c.dk * c.dv), 0.0);
  for (size_t n = 0; n < c.past.size(); ++n) w.state[n] = c.past[n];
  w.out.assign(static_cast<size_t>(c.batch * c.seq * c.q_heads * c.dv), 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t t = 0; t < c.seq; ++t) {
      const int64_t row = b * c.seq + t;
      for (int64_t h = 0; h < c.kv_heads; ++h) {
        double* s = &w.state[static_cast<size_t>((b * c.kv_heads + h) * c.dk * c.dv)];
        for (int64_t i = 0; i < c.dk && gated; ++i) {
          const int64_t g = c.decay_width == c.kv_heads ? h : h * c.dk + i;
          for (int64_t m = 0; m < c.dv; ++m) s[i * c.dv + m] *= std::exp(double(c.decay[row * c.decay_width + g]));
        }
        const float* k = &c.k[static_cast<size_t>((row * c.kv_heads + h) * c.dk)];
        std::vector<double> u(static_cast<size_t>(c.dv));
        for (int64_t m = 0; m < c.dv; ++m) {
          u[m] = c.v[(row * c.kv_heads + h) * c.dv + m];
          if (delta) {
            double retrieved = 0;
            for (int64_t i = 0; i < c.dk; ++i) retrieved += s[i * c.dv + m] * k[i];
            u[m] = c.beta[row * c.beta_width + (c.beta_width == 1 ? 0 : h)] * (u[m] - retrieved);
          }
        }
        for (int64_t i = 0; i < c.dk; ++i)
          for (int64_t m = 0; m < c.dv; ++m) s[i * c.dv + m] += k[i] * u[m];
      }
      for (int64_t h = 0; h < c.q_heads; ++h) {
        const int64_t kvh = h / (c.q_heads / c.kv_heads);
        const double* s = &w.state[static_cast<size_t>((b * c.kv_heads + kvh) * c.dk * c.dv)];
        for (int64_t m = 0; m < c.dv; ++m) {
          double o = 0;
          for (int64_t i = 0; i < c.dk; ++i) o += c.q[(row * c.q_heads + h) * c.dk + i] * s[i * c.dv + m];
          w.out[(row * c.q_heads + h) * c.dv + m] = scale * o;
        }
      }
    }
  return w;
}

// Random inputs for `rule`; keys L2-normalized per head for the delta rules, decays in
// [-0.5, 0], beta in [0, 1].
LinCase lin_case(std::string rule, int64_t batch, int64_t seq, int64_t q_heads, int64_t kv_heads, int64_t dk,
                 int64_t dv, int64_t decay_width, int64_t beta_width, uint32_t seed) {
  LinCase c;
  c.rule = std::move(rule);
  c.batch = batch;
  c.seq = seq;
  c.q_heads = q_heads;
  c.kv_heads = kv_heads;
  c.dk = dk;
  c.dv = dv;
  c.q = random_floats(batch * seq * q_heads * dk, seed);
  c.k = random_floats(batch * seq * kv_heads * dk, seed + 1);
  c.v = random_floats(batch * seq * kv_heads * dv, seed + 2);
  for (int64_t n = 0; n < batch * seq * kv_heads; ++n) {
    float norm = 0;
    for (int64_t i = 0; i < dk; ++i) norm += c.k[n * dk + i] * c.k[n * dk + i];
    for (int64_t i = 0; i < dk; ++i) c.k[n * dk + i] /= std::sqrt(norm);
  }
  c.decay_width = decay_width;
  c.beta_width = beta_width;
  if (decay_width > 0) c.decay = random_floats(batch * seq * decay_width, seed + 3, -0.5f, 0.0f);
  if (beta_width > 0) c.beta = random_floats(batch * seq * beta_width, seed + 4, 0.0f, 1.0f);
  return c;
}

// The call for `c`, whose inputs are rounded to `dtype` in place.
OpCall lin_call(LinCase& c, DType dtype = DType::F32) {
  OpCall call = opset27_call("LinearAttention");
  call.attrs.set("q_num_heads", attr_int(c.q_heads));
  call.attrs.set("kv_num_heads", attr_int(c.kv_heads));
  call.attrs.set("update_rule", attr_string(c.rule));
  if (c.scale != 0.0f) call.attrs.set("scale", attr_float(c.scale));
  call.inputs = {make_rounded_tensor(dtype, {c.batch, c.seq, c.q_heads * c.dk}, c.q),
                 make_rounded_tensor(dtype, {c.batch, c.seq, c.kv_heads * c.dk}, c.k),
                 make_rounded_tensor(dtype, {c.batch, c.seq, c.kv_heads * c.dv}, c.v),
                 c.past.empty() ? Tensor() : make_tensor_f32({c.batch, c.kv_heads, c.dk, c.dv}, c.past),
                 c.decay_width == 0 ? Tensor() : make_rounded_tensor(dtype, {c.batch, c.seq, c.decay_width}, c.decay),
                 c.beta_width == 0 ? Tensor() : make_rounded_tensor(dtype, {c.batch, c.seq, c.beta_width}, c.beta)};
  return call;
}

void expect_linear_attention(const LinCase& c, const OpCall& call, double rtol, double atol) {
  auto r = run_op_threads(call, 2);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const LinWant w = linear_attention_oracle(c);
  EXPECT_EQ((*r)[0].shape(), (Shape{c.batch, c.seq, c.q_heads * c.dv}));
  EXPECT_EQ((*r)[1].shape(), (Shape{c.batch, c.kv_heads, c.dk, c.dv}));
  expect_close((*r)[0], w.out, rtol, atol, c.rule + " output");
  expect_close((*r)[1], w.state, rtol, atol, c.rule + " present_state");
}

TEST(LinearAttentionOp, LinearGroupedHeadsOddSizes) {
  LinCase c = lin_case("linear", 2, 5, 6, 2, 3, 5, 0, 0, 11);
  expect_linear_attention(c, lin_call(c), 1e-5, 1e-5);
}

TEST(LinearAttentionOp, GatedPerKeyDecayWithPast) {
  LinCase c = lin_case("gated", 2, 4, 3, 3, 4, 3, 3 * 4, 0, 21);
  c.past = random_floats(2 * 3 * 4 * 3, 25);
  expect_linear_attention(c, lin_call(c), 1e-5, 1e-5);
}

TEST(LinearAttentionOp, DeltaMultiQueryBetaOfWidthOneExplicitScale) {
  LinCase c = lin_case("delta", 3, 6, 4, 1, 5, 2, 0, 1, 31);
  c.scale = 0.7f;
  expect_linear_attention(c, lin_call(c), 1e-5, 1e-5);
}

TEST(LinearAttentionOp, GatedDeltaPerHeadDecayGroupedWithPast) {
  LinCase c = lin_case("gated_delta", 2, 7, 6, 3, 3, 4, 3, 3, 41);
  c.past = random_floats(2 * 3 * 3 * 4, 45);
  expect_linear_attention(c, lin_call(c), 1e-5, 1e-5);
}

// float16 activations with a float32 state: present_state keeps the state's dtype.
TEST(LinearAttentionOp, Float16ActivationsFloatState) {
  LinCase c = lin_case("gated_delta", 1, 5, 2, 2, 4, 4, 2 * 4, 2, 51);
  c.past = random_floats(1 * 2 * 4 * 4, 55);
  const OpCall call = lin_call(c, DType::F16);
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::F16);
  EXPECT_EQ((*r)[1].dtype(), DType::F32);
  const LinWant w = linear_attention_oracle(c);
  expect_close((*r)[0], w.out, 2e-3, 1e-3, "output float16");
  expect_close((*r)[1], w.state, 1e-5, 1e-5, "present_state float32");
}

TEST(LinearAttentionOp, EmptySequencePassesThePastStateOn) {
  LinCase c = lin_case("gated_delta", 2, 0, 2, 1, 3, 2, 1, 1, 61);
  c.past = random_floats(2 * 1 * 3 * 2, 65);
  expect_linear_attention(c, lin_call(c), 0, 0);
}

TEST(LinearAttentionOp, RejectsBadAttributesAndShapes) {
  LinCase c = lin_case("gated_delta", 1, 2, 4, 2, 3, 2, 2, 2, 71);
  OpCall call = lin_call(c);
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  OpCall bad = call;
  bad.attrs.set("update_rule", attr_string("exponential"));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "unknown update_rule";
  bad = call;
  bad.attrs.set("kv_num_heads", attr_int(3));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "4 query heads over 3 kv heads";
  bad = call;
  bad.inputs[4] = Tensor();
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "gated_delta without decay";
  bad = call;
  bad.attrs.set("update_rule", attr_string("linear"));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "linear with decay and beta";
  bad = call;
  bad.inputs[4] = random_tensor({1, 2, 5}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "decay width neither Hkv nor Hkv * dk";
  bad = call;
  bad.inputs[5] = random_tensor({1, 2, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "beta width neither Hkv nor 1";
  bad = call;
  bad.inputs[3] = random_tensor({1, 2, 2, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "past_state with d_k and d_v swapped";
  bad = call;
  bad.inputs[1] = random_tensor({1, 2, 8}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "key head size differs from query's";
  bad = call;
  bad.inputs[2] = random_tensor({1, 3, 4}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "value sequence length differs";
  bad = call;
  bad.attrs = AttrMap();
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "q_num_heads and kv_num_heads missing";
}

// ---- CausalConvWithState oracle ---------------------------------------------------------------

struct ConvCase {
  int64_t batch = 0, channels = 0, len = 0, k = 0;
  std::vector<float> x, w, bias, past;  // bias and past may be empty
  bool silu = false;
};

// y[b, c, t] = bias[c] + sum_j w[c, j] xpad[b, c, t + j] (then x sigmoid(x) for silu), with
// xpad = past (or k - 1 zeros) followed by x; present_state = xpad's last k - 1 values.
std::pair<std::vector<double>, std::vector<double>> causal_conv_oracle(const ConvCase& c) {
  std::vector<double> y, present;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t ch = 0; ch < c.channels; ++ch) {
      const int64_t bc = b * c.channels + ch;
      std::vector<double> xpad;
      for (int64_t j = 0; j < c.k - 1; ++j) xpad.push_back(c.past.empty() ? 0.0 : c.past[bc * (c.k - 1) + j]);
      for (int64_t t = 0; t < c.len; ++t) xpad.push_back(c.x[bc * c.len + t]);
      for (int64_t t = 0; t < c.len; ++t) {
        double s = c.bias.empty() ? 0.0 : c.bias[ch];
        for (int64_t j = 0; j < c.k; ++j) s += c.w[ch * c.k + j] * xpad[t + j];
        y.push_back(c.silu ? s / (1.0 + std::exp(-s)) : s);
      }
      present.insert(present.end(), xpad.end() - (c.k - 1), xpad.end());
    }
  return {y, present};
}

ConvCase conv_case(int64_t batch, int64_t channels, int64_t len, int64_t k, bool bias, bool past, uint32_t seed) {
  ConvCase c;
  c.batch = batch;
  c.channels = channels;
  c.len = len;
  c.k = k;
  c.x = random_floats(batch * channels * len, seed);
  c.w = random_floats(channels * k, seed + 1);
  if (bias) c.bias = random_floats(channels, seed + 2);
  if (past) c.past = random_floats(batch * channels * (k - 1), seed + 3);
  return c;
}

// The call for `c`, whose inputs are rounded to `dtype` in place.
OpCall conv_call(ConvCase& c, DType dtype = DType::F32) {
  OpCall call = opset27_call("CausalConvWithState");
  if (c.silu) call.attrs.set("activation", attr_string("silu"));
  call.inputs = {make_rounded_tensor(dtype, {c.batch, c.channels, c.len}, c.x),
                 make_rounded_tensor(dtype, {c.channels, 1, c.k}, c.w),
                 c.bias.empty() ? Tensor() : make_rounded_tensor(dtype, {c.channels}, c.bias),
                 c.past.empty() ? Tensor() : make_rounded_tensor(dtype, {c.batch, c.channels, c.k - 1}, c.past)};
  return call;
}

void expect_causal_conv(ConvCase& c, DType dtype, double rtol, double atol) {
  const OpCall call = conv_call(c, dtype);
  auto r = run_op_threads(call, 2);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const auto [y, present] = causal_conv_oracle(c);
  EXPECT_EQ((*r)[0].shape(), (Shape{c.batch, c.channels, c.len}));
  EXPECT_EQ((*r)[1].shape(), (Shape{c.batch, c.channels, c.k - 1}));
  expect_close((*r)[0], y, rtol, atol, "output");
  expect_close((*r)[1], present, 0, 0, "present_state");
}

// Two new positions, a carry of four: the new state still holds two of the past values.
TEST(CausalConvWithStateOp, InputShorterThanTheCarryWithBiasAndSilu) {
  ConvCase c = conv_case(2, 3, 2, 5, true, true, 81);
  c.silu = true;
  expect_causal_conv(c, DType::F32, 1e-5, 1e-6);
}

TEST(CausalConvWithStateOp, OddSizesWithoutPast) {
  ConvCase c = conv_case(3, 5, 11, 4, false, false, 91);
  expect_causal_conv(c, DType::F32, 1e-5, 1e-6);
}

TEST(CausalConvWithStateOp, KernelOfOneHasAnEmptyState) {
  ConvCase c = conv_case(2, 3, 4, 1, true, false, 101);
  expect_causal_conv(c, DType::F32, 1e-5, 1e-6);
}

TEST(CausalConvWithStateOp, BFloat16WithPastAndSilu) {
  ConvCase c = conv_case(2, 4, 6, 3, true, true, 111);
  c.silu = true;
  expect_causal_conv(c, DType::BF16, 2e-2, 1e-2);
}

TEST(CausalConvWithStateOp, RejectsBadAttributesAndShapes) {
  ConvCase c = conv_case(1, 3, 4, 3, true, true, 121);
  const OpCall call = conv_call(c);
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  OpCall bad = call;
  bad.attrs.set("activation", attr_string("relu"));
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "unknown activation";
  bad = call;
  bad.inputs[1] = random_tensor({3, 2, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "weight middle axis 2";
  bad = call;
  bad.inputs[1] = random_tensor({3, 1, 0}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "kernel of size 0";
  bad = call;
  bad.inputs[2] = random_tensor({2}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "bias of 2 for 3 channels";
  bad = call;
  bad.inputs[3] = random_tensor({1, 3, 3}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "past_state of k entries, not k - 1";
  bad = call;
  bad.inputs[0] = random_tensor({3, 4}, 1);
  EXPECT_EQ(status_of(bad), StatusCode::InvalidArgument) << "2-D input";
}

}  // namespace
}  // namespace ignis::nn_test
