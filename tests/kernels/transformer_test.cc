// SPDX-License-Identifier: Apache-2.0
// Tests for the ai.onnx transformer ops (Attention, RMSNormalization, RotaryEmbedding) on odd
// sizes. Expected values come from the plain scalar loops below, written from the ONNX spec
// text: one query row at a time, in double, with no rounding to the tensor dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Attention oracle -------------------------------------------------------------------------

// Everything in [batch, heads, seq, size] layout; keys/values already include the past.
struct AttnCase {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, total = 0, head = 0, v_head = 0;
  std::vector<float> q, k, v;  // q: [B, Hq, Sq, D]; k: [B, Hkv, T, D]; v: [B, Hkv, T, Dv]
  double scale = 0;            // 0: 1/sqrt(D)
  double softcap = 0;
  bool causal = false;
  int64_t left = -1, right = -1;
  std::vector<int64_t> offset;  // per batch: keys before the query block
  // Additive mask term for (b, h, i, j): 0, -inf or a float value.
  std::function<double(int64_t, int64_t, int64_t, int64_t)> mask = [](int64_t, int64_t, int64_t, int64_t) {
    return 0.0;
  };
  std::vector<int64_t> nonpad;  // per batch; empty: all keys valid
};

struct AttnWant {
  std::vector<double> y;                  // [B, Hq, Sq, Dv]
  std::vector<double> raw, capped, biased, probs;  // [B, Hq, Sq, T]
};

AttnWant attention_oracle(const AttnCase& c) {
  AttnWant w;
  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.head));
  const int64_t group = c.q_heads / c.kv_heads;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.q_heads; ++h)
      for (int64_t i = 0; i < c.q_len; ++i) {
        const int64_t g = h / group;
        std::vector<double> logits(c.total), bias(c.total);
        bool any_allowed = false;
        for (int64_t j = 0; j < c.total; ++j) {
          double s = 0;
          for (int64_t d = 0; d < c.head; ++d)
            s += double(c.q[((b * c.q_heads + h) * c.q_len + i) * c.head + d]) *
                 c.k[((b * c.kv_heads + g) * c.total + j) * c.head + d];
          s *= scale;
          w.raw.push_back(s);
          if (c.softcap > 0) s = c.softcap * std::tanh(s / c.softcap);
          w.capped.push_back(s);
          const int64_t pos = i + (c.offset.empty() ? 0 : c.offset[b]);
          bool allowed = !(c.causal && j > pos);
          if (c.left >= 0 && pos - j > c.left) allowed = false;
          if (c.right >= 0 && j - pos > c.right) allowed = false;
          if (!c.nonpad.empty() && j >= c.nonpad[b]) allowed = false;
          bias[j] = (allowed ? 0.0 : -kInf) + c.mask(b, h, i, j);
          any_allowed = any_allowed || bias[j] != -kInf;
          logits[j] = s + bias[j];
          w.biased.push_back(logits[j]);
        }
        double mx = -kInf, sum = 0;
        for (double x : logits) mx = std::max(mx, x);
        std::vector<double> p(c.total, 0.0);
        if (any_allowed) {
          for (int64_t j = 0; j < c.total; ++j) sum += p[j] = std::exp(logits[j] - mx);
          for (double& x : p) x /= sum;
        }
        w.probs.insert(w.probs.end(), p.begin(), p.end());
        for (int64_t d = 0; d < c.v_head; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < c.total; ++j) acc += p[j] * c.v[((b * c.kv_heads + g) * c.total + j) * c.v_head + d];
          w.y.push_back(acc);
        }
      }
  return w;
}

// [B, H, S, D] -> [B, S, H * D].
template <class V>
std::vector<V> to_3d(const std::vector<V>& x, int64_t b, int64_t h, int64_t s, int64_t d) {
  std::vector<V> out(x.size());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t a = 0; a < h; ++a)
      for (int64_t t = 0; t < s; ++t)
        for (int64_t e = 0; e < d; ++e) out[((n * s + t) * h + a) * d + e] = x[((n * h + a) * s + t) * d + e];
  return out;
}

// Slices positions [from, from + len) of the sequence axis of a [B, H, S, D] tensor.
std::vector<float> seq_slice(const std::vector<float>& x, int64_t b, int64_t h, int64_t s, int64_t d, int64_t from,
                             int64_t len) {
  std::vector<float> out;
  for (int64_t n = 0; n < b * h; ++n)
    for (int64_t t = from; t < from + len; ++t)
      for (int64_t e = 0; e < d; ++e) out.push_back(x[(n * s + t) * d + e]);
  return out;
}

// expect_close that also accepts matching infinities (masked scores are -inf).
void expect_close_inf(const Tensor& got, const std::vector<double>& want, double rtol, double atol,
                      const std::string& what) {
  const std::vector<double> g = as_doubles(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const bool ok =
        std::isinf(want[i]) ? g[i] == want[i] : std::fabs(g[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << ", want " << want[i];
    }
  }
}

std::vector<double> doubles(const std::vector<float>& x) { return {x.begin(), x.end()}; }

OpCall attention_call(int64_t opset) {
  OpCall call;
  call.op_type = "Attention";
  call.opset = opset;
  return call;
}

AttnCase random_case(int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len, int64_t total, int64_t head,
                     int64_t v_head, uint32_t seed) {
  AttnCase c;
  c.batch = batch;
  c.q_heads = q_heads;
  c.kv_heads = kv_heads;
  c.q_len = q_len;
  c.total = total;
  c.head = head;
  c.v_head = v_head;
  c.q = random_floats(batch * q_heads * q_len * head, seed, -1.5f, 1.5f);
  c.k = random_floats(batch * kv_heads * total * head, seed + 1, -1.5f, 1.5f);
  c.v = random_floats(batch * kv_heads * total * v_head, seed + 2);
  return c;
}

TEST(AttentionOp, FourDMultiHeadOddSizes) {
  AttnCase c = random_case(2, 3, 3, 5, 7, 6, 4, 11);
  OpCall call = attention_call(23);
  call.inputs = {make_tensor_f32({2, 3, 5, 6}, c.q), make_tensor_f32({2, 3, 7, 6}, c.k),
                 make_tensor_f32({2, 3, 7, 4}, c.v)};
  call.num_outputs = 4;
  auto r = run_op_threads(call, 3);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const AttnWant w = attention_oracle(c);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3, 5, 4}));
  expect_close((*r)[0], w.y, 1e-5, 1e-6, "Y");
  expect_close((*r)[1], doubles(c.k), 0, 0, "present_key");
  expect_close((*r)[2], doubles(c.v), 0, 0, "present_value");
  expect_close((*r)[3], w.raw, 1e-5, 1e-6, "qk_matmul_output mode 0");
}

// 3-D inputs, 6 query heads sharing 2 KV heads, causal, float mask, past key/value.
TEST(AttentionOp, ThreeDGroupedQueryCausalFloatMaskWithPast) {
  const int64_t B = 2, Hq = 6, Hkv = 2, Sq = 5, L = 4, P = 3, T = P + L, D = 6, Dv = 5;
  AttnCase c = random_case(B, Hq, Hkv, Sq, T, D, Dv, 21);
  c.causal = true;
  c.offset = {P, P};
  const std::vector<float> mask = random_floats(Sq * T, 24, -2.0f, 0.5f);
  c.mask = [&](int64_t, int64_t, int64_t i, int64_t j) { return double(mask[i * T + j]); };
  OpCall call = attention_call(23);
  call.attrs.set("q_num_heads", attr_int(Hq));
  call.attrs.set("kv_num_heads", attr_int(Hkv));
  call.attrs.set("is_causal", attr_int(1));
  for (int64_t mode : {0, 1, 2, 3}) {
    call.attrs.set("qk_matmul_output_mode", attr_int(mode));
    call.inputs = {make_tensor_f32({B, Sq, Hq * D}, to_3d(c.q, B, Hq, Sq, D)),
                   make_tensor_f32({B, L, Hkv * D}, to_3d(seq_slice(c.k, B, Hkv, T, D, P, L), B, Hkv, L, D)),
                   make_tensor_f32({B, L, Hkv * Dv}, to_3d(seq_slice(c.v, B, Hkv, T, Dv, P, L), B, Hkv, L, Dv)),
                   make_tensor_f32({Sq, T}, mask),
                   make_tensor_f32({B, Hkv, P, D}, seq_slice(c.k, B, Hkv, T, D, 0, P)),
                   make_tensor_f32({B, Hkv, P, Dv}, seq_slice(c.v, B, Hkv, T, Dv, 0, P))};
    call.num_outputs = 4;
    auto r = run_op_threads(call, 2);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    const AttnWant w = attention_oracle(c);
    const std::string m = "mode " + std::to_string(mode);
    EXPECT_EQ((*r)[0].shape(), (Shape{B, Sq, Hq * Dv}));
    expect_close((*r)[0], to_3d(w.y, B, Hq, Sq, Dv), 1e-5, 1e-6, "Y " + m);
    expect_close((*r)[1], doubles(c.k), 0, 0, "present_key " + m);
    expect_close((*r)[2], doubles(c.v), 0, 0, "present_value " + m);
    const std::vector<double>* qk[] = {&w.raw, &w.capped, &w.biased, &w.probs};
    expect_close_inf((*r)[3], *qk[mode], 1e-5, 1e-6, "qk_matmul_output " + m);
  }
}

// Bool mask broadcast over heads, softcap and an explicit scale, 4-D GQA.
TEST(AttentionOp, BoolMaskSoftcapScale) {
  const int64_t B = 2, Hq = 6, Hkv = 2, Sq = 3, T = 7, D = 5;
  AttnCase c = random_case(B, Hq, Hkv, Sq, T, D, D, 31);
  c.softcap = 1.5;
  c.scale = 0.3f;
  std::vector<uint8_t> allow(B * Sq * T);
  for (size_t n = 0; n < allow.size(); ++n) allow[n] = (n * 7 + 3) % 5 != 0;
  c.mask = [&](int64_t b, int64_t, int64_t i, int64_t j) { return allow[(b * Sq + i) * T + j] ? 0.0 : -kInf; };
  Tensor mask = Tensor::empty(DType::Bool, {B, 1, Sq, T});
  for (size_t n = 0; n < allow.size(); ++n) mask.data_as<bool>()[n] = allow[n] != 0;
  OpCall call = attention_call(24);
  call.attrs.set("softcap", attr_float(1.5f));
  call.attrs.set("scale", attr_float(0.3f));
  call.attrs.set("qk_matmul_output_mode", attr_int(1));
  call.inputs = {make_tensor_f32({B, Hq, Sq, D}, c.q), make_tensor_f32({B, Hkv, T, D}, c.k),
                 make_tensor_f32({B, Hkv, T, D}, c.v), mask};
  call.num_outputs = 4;
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const AttnWant w = attention_oracle(c);
  expect_close((*r)[0], w.y, 1e-5, 1e-6, "Y");
  expect_close((*r)[3], w.capped, 1e-5, 1e-6, "qk_matmul_output mode 1");
}

// A short mask (last axis below the key count) masks the rest; an all-false row gives zeros.
TEST(AttentionOp, ShortMaskAndFullyMaskedRow) {
  const int64_t B = 1, H = 2, Sq = 3, T = 5, D = 4;
  AttnCase c = random_case(B, H, H, Sq, T, D, D, 41);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> mask = {0, -1, 0.5f, -inf, -inf, -inf, -inf, -inf, 0, 0, 0, 0};  // [Sq, 4], row 1 masked
  c.mask = [&](int64_t, int64_t, int64_t i, int64_t j) { return j < 4 ? double(mask[i * 4 + j]) : -kInf; };
  OpCall call = attention_call(23);
  call.attrs.set("qk_matmul_output_mode", attr_int(3));
  call.inputs = {make_tensor_f32({B, H, Sq, D}, c.q), make_tensor_f32({B, H, T, D}, c.k),
                 make_tensor_f32({B, H, T, D}, c.v), make_tensor_f32({Sq, 4}, mask)};
  call.num_outputs = 4;
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  const AttnWant w = attention_oracle(c);
  expect_close((*r)[0], w.y, 1e-5, 1e-6, "Y");
  expect_close((*r)[3], w.probs, 1e-5, 1e-6, "probabilities");
  for (int64_t d = 0; d < D; ++d) EXPECT_EQ((*r)[0].data_as<float>()[1 * D + d], 0.0f) << "fully masked row";
}

// External cache (opset 24): nonpad_kv_seqlen pads keys per batch and shifts the causal frontier.
TEST(AttentionOp, NonpadKvSeqlenCausal) {
  const int64_t B = 3, Hq = 4, Hkv = 2, Sq = 2, T = 7, D = 6;
  AttnCase c = random_case(B, Hq, Hkv, Sq, T, D, D, 51);
  c.causal = true;
  c.nonpad = {5, 7, 1};
  c.offset = {5 - Sq, 7 - Sq, 1 - Sq};  // batch 2: first query row sees no key
  OpCall call = attention_call(24);
  call.attrs.set("is_causal", attr_int(1));
  call.inputs = {make_tensor_f32({B, Hq, Sq, D}, c.q), make_tensor_f32({B, Hkv, T, D}, c.k),
                 make_tensor_f32({B, Hkv, T, D}, c.v), Tensor(), Tensor(), Tensor(),
                 make_tensor_i64({B}, c.nonpad)};
  expect_close(run1(call), attention_oracle(c).y, 1e-5, 1e-6, "Y");
}

// Sliding window (opset 25) with past keys, not causal: p - 2 <= j <= p + 1.
TEST(AttentionOp, SlidingWindowWithPast) {
  const int64_t B = 2, H = 3, Sq = 4, L = 4, P = 2, T = P + L, D = 3;
  AttnCase c = random_case(B, H, H, Sq, T, D, D, 61);
  c.left = 2;
  c.right = 1;
  c.offset = {P, P};
  OpCall call = attention_call(25);
  call.attrs.set("left_window_size", attr_int(2));
  call.attrs.set("right_window_size", attr_int(1));
  call.inputs = {make_tensor_f32({B, H, Sq, D}, c.q),
                 make_tensor_f32({B, H, L, D}, seq_slice(c.k, B, H, T, D, P, L)),
                 make_tensor_f32({B, H, L, D}, seq_slice(c.v, B, H, T, D, P, L)),
                 Tensor(),
                 make_tensor_f32({B, H, P, D}, seq_slice(c.k, B, H, T, D, 0, P)),
                 make_tensor_f32({B, H, P, D}, seq_slice(c.v, B, H, T, D, 0, P))};
  expect_close(run1(call), attention_oracle(c).y, 1e-5, 1e-6, "Y");
}

TEST(AttentionOp, Float16FollowsFloatResult) {
  const int64_t B = 1, H = 3, Sq = 5, T = 7, D = 6;
  AttnCase c = random_case(B, H, H, Sq, T, D, D, 71);
  c.causal = true;
  auto half = [](const Shape& s, const std::vector<float>& v) {
    Tensor t = Tensor::empty(DType::F16, s);
    for (size_t n = 0; n < v.size(); ++n) t.data_as<Half>()[n] = Half{float_to_half(v[n])};
    return t;
  };
  // The oracle sees the same half-rounded inputs.
  for (auto* v : {&c.q, &c.k, &c.v})
    for (float& x : *v) x = half_to_float(float_to_half(x));
  OpCall call = attention_call(23);
  call.attrs.set("is_causal", attr_int(1));
  call.inputs = {half({B, H, Sq, D}, c.q), half({B, H, T, D}, c.k), half({B, H, T, D}, c.v)};
  expect_close(run1(call), attention_oracle(c).y, 1e-2, 2e-3, "Y float16");
}

TEST(AttentionOp, RejectsInconsistentShapes) {
  OpCall call = attention_call(23);
  call.inputs = {random_tensor({2, 3, 5, 6}, 1), random_tensor({2, 3, 7, 4}, 2), random_tensor({2, 3, 7, 6}, 3)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "Q and K head sizes differ";
  call.inputs = {random_tensor({2, 4, 5, 6}, 1), random_tensor({2, 3, 7, 6}, 2), random_tensor({2, 3, 7, 6}, 3)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "4 query heads over 3 KV heads";
  call.inputs = {random_tensor({2, 5, 18}, 1), random_tensor({2, 7, 18}, 2), random_tensor({2, 7, 18}, 3)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "3-D without q_num_heads";
  call.inputs = {random_tensor({2, 3, 5, 6}, 1), random_tensor({2, 3, 7, 6}, 2), random_tensor({2, 3, 7, 6}, 3),
                 random_tensor({5, 8}, 4)};
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "mask longer than the keys";
  call.inputs[3] = random_tensor({4, 7}, 4);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "mask rows";
  call.inputs[3] = Tensor();
  call.inputs.push_back(random_tensor({2, 3, 2, 6}, 5));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "past_key without past_value";
  call.inputs.push_back(random_tensor({2, 3, 2, 6}, 6));
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  call.inputs[4] = random_tensor({2, 3, 2, 5}, 5);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "past_key head size";
  call.inputs.resize(4);
  call.inputs[3] = make_tensor_i64({5, 7}, std::vector<int64_t>(35, 1));
  EXPECT_EQ(status_of(call), StatusCode::Unsupported) << "int64 mask";
  call.inputs.resize(3);
  call.opset = 25;
  call.attrs.set("q_num_heads", attr_int(3));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "head counts with 4-D inputs at opset 25";
}

// ---- RMSNormalization ------------------------------------------------------------------------

TEST(RMSNormalizationOp, AxisAndBroadcastScale) {
  const Shape xs{2, 3, 5};
  const std::vector<float> x = random_floats(xs.numel(), 81, -2.0f, 2.0f);
  const std::vector<float> s = random_floats(5, 82);
  OpCall call;
  call.op_type = "RMSNormalization";
  call.opset = 23;
  call.attrs.set("axis", attr_int(-2));
  call.attrs.set("epsilon", attr_float(0.01f));
  call.inputs = {make_tensor_f32(xs, x), make_tensor_f32({1, 5}, s)};
  std::vector<double> want;
  for (int64_t r = 0; r < 2; ++r) {
    double ms = 0;
    for (int64_t i = 0; i < 15; ++i) ms += double(x[r * 15 + i]) * x[r * 15 + i];
    const double rms = std::sqrt(ms / 15 + double(0.01f));
    for (int64_t i = 0; i < 15; ++i) want.push_back(x[r * 15 + i] / rms * s[i % 5]);
  }
  expect_close(run1(call), want, 1e-5, 1e-6, "axis -2");
  call.attrs.set("axis", attr_int(3));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
  call.attrs.set("axis", attr_int(-1));
  call.inputs[1] = random_tensor({3, 1}, 83);
  EXPECT_EQ(status_of(call), StatusCode::Ok);
  call.inputs[1] = random_tensor({4}, 83);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "scale does not broadcast";
  call.inputs[1] = random_tensor({5}, 83);
  call.attrs.set("stash_type", attr_int(11));
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);
}

// ---- RotaryEmbedding -------------------------------------------------------------------------

// Oracle on [B, H, S, D]: pairs (x1, x2) rotated by the angle whose cos/sin are given.
std::vector<double> rotary_oracle(const std::vector<float>& x, int64_t b, int64_t h, int64_t s, int64_t d,
                                  int64_t rot, bool interleaved,
                                  const std::function<int64_t(int64_t, int64_t)>& row,
                                  const std::vector<float>& cos_c, const std::vector<float>& sin_c) {
  std::vector<double> y(x.begin(), x.end());
  for (int64_t n = 0; n < b; ++n)
    for (int64_t a = 0; a < h; ++a)
      for (int64_t t = 0; t < s; ++t) {
        const int64_t base = ((n * h + a) * s + t) * d;
        for (int64_t k = 0; k < rot / 2; ++k) {
          const int64_t i1 = base + (interleaved ? 2 * k : k), i2 = base + (interleaved ? 2 * k + 1 : k + rot / 2);
          const double c = cos_c[row(n, t) * (rot / 2) + k], sn = sin_c[row(n, t) * (rot / 2) + k];
          y[i1] = c * x[i1] - sn * x[i2];
          y[i2] = sn * x[i1] + c * x[i2];
        }
      }
  return y;
}

TEST(RotaryEmbeddingOp, FourDInterleavedWithPositionIds) {
  const int64_t B = 2, H = 3, S = 5, D = 6, Max = 9;
  const std::vector<float> x = random_floats(B * H * S * D, 91);
  const std::vector<float> cos_c = random_floats(Max * D / 2, 92), sin_c = random_floats(Max * D / 2, 93);
  const std::vector<int64_t> pos = {0, 3, 8, 1, 2, 7, 7, 4, 5, 6};
  OpCall call;
  call.op_type = "RotaryEmbedding";
  call.opset = 23;
  call.attrs.set("interleaved", attr_int(1));
  call.inputs = {make_tensor_f32({B, H, S, D}, x), make_tensor_f32({Max, D / 2}, cos_c),
                 make_tensor_f32({Max, D / 2}, sin_c), make_tensor_i64({B, S}, pos)};
  const auto want = rotary_oracle(x, B, H, S, D, D, true, [&](int64_t n, int64_t t) { return pos[n * S + t]; },
                                  cos_c, sin_c);
  expect_close(run1(call), want, 1e-6, 1e-7, "interleaved");
  call.inputs[3] = make_tensor_i64({B, S}, {0, 3, 9, 1, 2, 7, 7, 4, 5, 6});
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "position out of range";
}

TEST(RotaryEmbeddingOp, ThreeDPartialRotationWithoutPositionIds) {
  const int64_t B = 2, H = 3, S = 5, D = 10, R = 6;
  const std::vector<float> x4 = random_floats(B * H * S * D, 101);
  const std::vector<float> cos_c = random_floats(B * S * R / 2, 102), sin_c = random_floats(B * S * R / 2, 103);
  OpCall call;
  call.op_type = "RotaryEmbedding";
  call.opset = 23;
  call.attrs.set("num_heads", attr_int(H));
  call.attrs.set("rotary_embedding_dim", attr_int(R));
  call.inputs = {make_tensor_f32({B, S, H * D}, to_3d(x4, B, H, S, D)), make_tensor_f32({B, S, R / 2}, cos_c),
                 make_tensor_f32({B, S, R / 2}, sin_c)};
  const auto want =
      rotary_oracle(x4, B, H, S, D, R, false, [&](int64_t n, int64_t t) { return n * S + t; }, cos_c, sin_c);
  expect_close(run1(call), to_3d(want, B, H, S, D), 1e-6, 1e-7, "partial, halves");
  call.attrs.set("rotary_embedding_dim", attr_int(7));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "odd rotary dim";
  call.attrs.set("rotary_embedding_dim", attr_int(R));
  call.inputs[2] = random_tensor({B, S, R}, 104);
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument) << "sin cache shape";
}

}  // namespace
}  // namespace ignis::nn_test
