// SPDX-License-Identifier: Apache-2.0
// Tests for LSTM, GRU and RNN. Expected values come from the step-by-step scalar loops below,
// written from the ONNX equations: one batch entry and one time step at a time, in double,
// always in layout 0 (layout-1 cases transpose the inputs and expected outputs here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

using Fn = std::function<double(double)>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Case {
  std::string op = "LSTM";
  int64_t seq = 4, batch = 3, input = 7, hidden = 5;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = true, peepholes = false;
  std::vector<int32_t> lens;  // empty: no sequence_lens input
  float clip = 0.0f;          // 0: no clip
  bool input_forget = false, linear_before_reset = false;
  // Activations by name for the node, with the equivalent functions for the reference
  // (empty: the op's defaults).
  std::vector<std::string> act_names;
  std::vector<float> act_alpha, act_beta;
  std::vector<Fn> acts;
  uint32_t seed = 1;

  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
};

// Layout-0 data of a case: X [seq, batch, input], W [dirs, G*H, input], R [dirs, G*H, H],
// B [dirs, 2*G*H], h0/c0 [dirs, batch, H], P [dirs, 3H].
struct Data {
  std::vector<float> x, w, r, b, h0, c0, p;
};

Data make_data(const Case& c) {
  const int64_t gh = c.gates() * c.hidden, d = c.dirs();
  Data data;
  data.x = random_floats(c.seq * c.batch * c.input, c.seed);
  data.w = random_floats(d * gh * c.input, c.seed + 1, -0.6f, 0.6f);
  data.r = random_floats(d * gh * c.hidden, c.seed + 2, -0.6f, 0.6f);
  data.b = random_floats(d * 2 * gh, c.seed + 3, -0.5f, 0.5f);
  data.h0 = random_floats(d * c.batch * c.hidden, c.seed + 4);
  data.c0 = random_floats(d * c.batch * c.hidden, c.seed + 5);
  data.p = random_floats(d * 3 * c.hidden, c.seed + 6, -0.5f, 0.5f);
  return data;
}

struct Expected {
  std::vector<double> y, yh, yc;  // layout 0
};

// One direction of one batch entry, straight from the ONNX equations.
void reference_sequence(const Case& c, const Data& data, int64_t dir, int64_t bt, Expected& out) {
  const int64_t H = c.hidden, I = c.input, G = c.gates(), B = c.batch, D = c.dirs();
  const bool rev = c.direction == "reverse" || dir == 1;
  const int64_t len = c.lens.empty() ? c.seq : c.lens[bt];
  std::vector<Fn> f;
  const size_t per = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
  if (c.acts.empty()) {
    const Fn sg = sigmoid, th = [](double v) { return std::tanh(v); };
    f = c.op == "LSTM" ? std::vector<Fn>{sg, th, th} : c.op == "GRU" ? std::vector<Fn>{sg, th} : std::vector<Fn>{th};
  } else {
    f.assign(c.acts.begin() + static_cast<int64_t>(c.acts.size() == per ? 0 : dir * per),
             c.acts.begin() + static_cast<int64_t>(c.acts.size() == per ? per : (dir + 1) * per));
  }
  auto clip = [&](double v) { return c.clip > 0 ? std::min<double>(std::max<double>(v, -c.clip), c.clip) : v; };
  auto W = [&](int64_t row, int64_t i) -> double { return data.w[(dir * G * H + row) * I + i]; };
  auto R = [&](int64_t row, int64_t k) -> double { return data.r[(dir * G * H + row) * H + k]; };
  auto Wb = [&](int64_t row) -> double { return c.bias ? data.b[dir * 2 * G * H + row] : 0.0; };
  auto Rb = [&](int64_t row) -> double { return c.bias ? data.b[dir * 2 * G * H + G * H + row] : 0.0; };
  std::vector<double> h(H, 0.0), cell(H, 0.0);
  if (c.initial)
    for (int64_t j = 0; j < H; ++j) {
      h[j] = data.h0[(dir * B + bt) * H + j];
      cell[j] = data.c0[(dir * B + bt) * H + j];
    }
  for (int64_t s = 0; s < len; ++s) {
    const int64_t t = rev ? len - 1 - s : s;
    // xw[row] = x_t . W[row] + Wb[row], hw[row] = h . R[row] + Rb[row]
    std::vector<double> xw(G * H), hw(G * H);
    for (int64_t row = 0; row < G * H; ++row) {
      double a = Wb(row), r = Rb(row);
      for (int64_t i = 0; i < I; ++i) a += data.x[(t * B + bt) * I + i] * W(row, i);
      for (int64_t k = 0; k < H; ++k) r += h[k] * R(row, k);
      xw[row] = a;
      hw[row] = r;
    }
    std::vector<double> hn(H);
    if (c.op == "LSTM") {
      for (int64_t j = 0; j < H; ++j) {
        const double pi = c.peepholes ? data.p[dir * 3 * H + j] : 0.0;
        const double po = c.peepholes ? data.p[dir * 3 * H + H + j] : 0.0;
        const double pf = c.peepholes ? data.p[dir * 3 * H + 2 * H + j] : 0.0;
        const double it = f[0](clip(xw[j] + hw[j] + pi * cell[j]));
        const double ft = c.input_forget ? 1.0 - it : f[0](clip(xw[2 * H + j] + hw[2 * H + j] + pf * cell[j]));
        const double ct = f[1](clip(xw[3 * H + j] + hw[3 * H + j]));
        const double cn = ft * cell[j] + it * ct;
        const double ot = f[0](clip(xw[H + j] + hw[H + j] + po * cn));
        cell[j] = cn;
        hn[j] = ot * f[2](cn);  // clip applies to the gates, not to the cell state
      }
    } else if (c.op == "GRU") {
      std::vector<double> z(H), r(H);
      for (int64_t j = 0; j < H; ++j) {
        z[j] = f[0](clip(xw[j] + hw[j]));
        r[j] = f[0](clip(xw[H + j] + hw[H + j]));
      }
      for (int64_t j = 0; j < H; ++j) {
        double rec;
        if (c.linear_before_reset) {
          rec = r[j] * hw[2 * H + j];
        } else {
          rec = Rb(2 * H + j);
          for (int64_t k = 0; k < H; ++k) rec += r[k] * h[k] * R(2 * H + j, k);
        }
        const double cand = f[1](clip(xw[2 * H + j] + rec));
        hn[j] = (1.0 - z[j]) * cand + z[j] * h[j];
      }
    } else {
      for (int64_t j = 0; j < H; ++j) hn[j] = f[0](clip(xw[j] + hw[j]));
    }
    h = hn;
    for (int64_t j = 0; j < H; ++j) out.y[((t * D + dir) * B + bt) * H + j] = h[j];
  }
  for (int64_t j = 0; j < H; ++j) {
    out.yh[(dir * B + bt) * H + j] = h[j];
    out.yc[(dir * B + bt) * H + j] = cell[j];
  }
}

Expected reference(const Case& c, const Data& data) {
  Expected e;
  e.y.assign(c.seq * c.dirs() * c.batch * c.hidden, 0.0);
  e.yh.assign(c.dirs() * c.batch * c.hidden, 0.0);
  e.yc = e.yh;
  for (int64_t d = 0; d < c.dirs(); ++d)
    for (int64_t b = 0; b < c.batch; ++b) reference_sequence(c, data, d, b, e);
  return e;
}

// Swaps the first two axes of a row-major [a, b, rest] array.
template <class T>
std::vector<T> swap01(const std::vector<T>& v, int64_t a, int64_t b) {
  const int64_t rest = static_cast<int64_t>(v.size()) / (a * b);
  std::vector<T> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < rest; ++k) out[(j * a + i) * rest + k] = v[(i * b + j) * rest + k];
  return out;
}

OpCall make_call(const Case& c, const Data& data) {
  const int64_t gh = c.gates() * c.hidden, D = c.dirs();
  const bool l1 = c.layout == 1;
  OpCall call;
  call.op_type = c.op;
  call.opset = l1 ? 14 : 7;
  call.attrs.set("hidden_size", attr_int(c.hidden));
  call.attrs.set("direction", attr_string(c.direction));
  if (l1) call.attrs.set("layout", attr_int(1));
  if (c.clip > 0) call.attrs.set("clip", attr_float(c.clip));
  if (c.input_forget) call.attrs.set("input_forget", attr_int(1));
  if (c.linear_before_reset) call.attrs.set("linear_before_reset", attr_int(1));
  if (!c.act_names.empty()) {
    Attribute a;
    a.kind = Attribute::Kind::Strings;
    a.strings = c.act_names;
    call.attrs.set("activations", a);
  }
  if (!c.act_alpha.empty()) call.attrs.set("activation_alpha", attr_floats(c.act_alpha));
  if (!c.act_beta.empty()) call.attrs.set("activation_beta", attr_floats(c.act_beta));
  const Shape xs = l1 ? Shape{c.batch, c.seq, c.input} : Shape{c.seq, c.batch, c.input};
  const Shape ss = l1 ? Shape{c.batch, D, c.hidden} : Shape{D, c.batch, c.hidden};
  call.inputs = {make_tensor_f32(xs, l1 ? swap01(data.x, c.seq, c.batch) : data.x),
                 make_tensor_f32({D, gh, c.input}, data.w), make_tensor_f32({D, gh, c.hidden}, data.r)};
  call.inputs.push_back(c.bias ? make_tensor_f32({D, 2 * gh}, data.b) : Tensor());
  call.inputs.push_back(c.lens.empty() ? Tensor() : make_tensor<int32_t>({c.batch}, c.lens));
  call.inputs.push_back(c.initial ? make_tensor_f32(ss, l1 ? swap01(data.h0, D, c.batch) : data.h0) : Tensor());
  if (c.op == "LSTM") {
    call.inputs.push_back(c.initial ? make_tensor_f32(ss, l1 ? swap01(data.c0, D, c.batch) : data.c0) : Tensor());
    call.inputs.push_back(c.peepholes ? make_tensor_f32({D, 3 * c.hidden}, data.p) : Tensor());
  }
  call.num_outputs = c.op == "LSTM" ? 3 : 2;
  return call;
}

// Runs the case through the reference kernel (single- and multi-threaded) and compares all
// outputs with the scalar loops.
void check_case(const Case& c, const std::string& what) {
  const Data data = make_data(c);
  Expected e = reference(c, data);
  if (c.layout == 1) {
    // Y [seq, D, batch, H] -> [batch, seq, D, H]; states [D, batch, H] -> [batch, D, H].
    const int64_t D = c.dirs();
    std::vector<double> y(e.y.size());
    for (int64_t t = 0; t < c.seq; ++t)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < c.batch; ++b)
          for (int64_t j = 0; j < c.hidden; ++j)
            y[((b * c.seq + t) * D + d) * c.hidden + j] = e.y[((t * D + d) * c.batch + b) * c.hidden + j];
    e.y = y;
    e.yh = swap01(e.yh, D, c.batch);
    e.yc = swap01(e.yc, D, c.batch);
  }
  const OpCall call = make_call(c, data);
  for (int threads : {1, 4}) {
    auto r = run_op_threads(call, threads);
    ASSERT_TRUE(r.has_value()) << what << ": " << r.error().to_string();
    const std::string tag = what + " (" + std::to_string(threads) + " threads)";
    expect_close((*r)[0], e.y, 1e-4, 1e-5, tag + " Y");
    expect_close((*r)[1], e.yh, 1e-4, 1e-5, tag + " Y_h");
    if (c.op == "LSTM") expect_close((*r)[2], e.yc, 1e-4, 1e-5, tag + " Y_c");
  }
}

TEST(LstmOp, ForwardWithPeepholesOddSizes) {
  Case c;
  c.peepholes = true;
  check_case(c, "lstm forward");
}

TEST(LstmOp, NoBiasNoInitialState) {
  Case c;
  c.bias = false;
  c.initial = false;
  check_case(c, "lstm bare");
}

TEST(LstmOp, BidirectionalWithSequenceLengths) {
  Case c;
  c.direction = "bidirectional";
  c.lens = {4, 2, 1};
  c.peepholes = true;
  check_case(c, "lstm bidirectional lens");
}

TEST(LstmOp, ReverseLayout1) {
  Case c;
  c.direction = "reverse";
  c.layout = 1;
  c.lens = {3, 4, 2};
  check_case(c, "lstm reverse layout 1");
}

TEST(LstmOp, BidirectionalLayout1) {
  Case c;
  c.direction = "bidirectional";
  c.layout = 1;
  c.peepholes = true;
  check_case(c, "lstm bidirectional layout 1");
}

TEST(LstmOp, InputForgetAndClip) {
  Case c;
  c.input_forget = true;
  c.clip = 0.7f;
  check_case(c, "lstm input_forget clip");
}

TEST(LstmOp, CustomActivationsWithAlphaBeta) {
  Case c;
  c.direction = "bidirectional";
  // Forward: HardSigmoid(0.3, 0.4), ScaledTanh(1.5, 0.8), Softsign; backward: Sigmoid,
  // LeakyRelu(0.2), Elu (default alpha 1). alpha/beta go to the functions that take them.
  c.act_names = {"HardSigmoid", "ScaledTanh", "Softsign", "Sigmoid", "LeakyRelu", "Elu"};
  c.act_alpha = {0.3f, 1.5f, 0.2f};
  c.act_beta = {0.4f, 0.8f};
  c.acts = {[](double v) { return std::min(std::max(0.3f * v + 0.4f, 0.0), 1.0); },
            [](double v) { return 1.5f * std::tanh(0.8f * v); },
            [](double v) { return v / (1 + std::fabs(v)); },
            sigmoid,
            [](double v) { return v >= 0 ? v : 0.2f * v; },
            [](double v) { return v >= 0 ? v : std::exp(v) - 1; }};
  check_case(c, "lstm custom activations");
}

TEST(LstmOp, Float64) {
  Case c;
  c.peepholes = true;
  c.direction = "bidirectional";
  const Data data = make_data(c);
  const Expected e = reference(c, data);
  OpCall call = make_call(c, data);
  for (auto& t : call.inputs) {
    if (!t.defined() || t.dtype() != DType::F32) continue;
    std::vector<double> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.data_as<float>()[i];
    t = make_tensor<double>(t.shape(), v);
  }
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::F64);
  expect_close((*r)[0], e.y, 1e-10, 1e-12, "f64 Y");
  expect_close((*r)[2], e.yc, 1e-10, 1e-12, "f64 Y_c");
}

TEST(LstmOp, Float16ThroughFloat32) {
  Case c;
  c.direction = "bidirectional";
  c.lens = {3, 4, 1};
  const Data data = make_data(c);
  OpCall call = make_call(c, data);
  // Round the inputs to float16 first so the reference sees the same values.
  Data rounded = data;
  auto to_half = [](const Tensor& t, std::vector<float>* back) {
    std::vector<Half> v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = from_compute<Half>(t.data_as<float>()[i]);
      if (back) (*back)[i] = to_compute(v[i]);
    }
    return make_tensor<Half>(t.shape(), v);
  };
  std::vector<float>* backs[] = {&rounded.x, &rounded.w, &rounded.r, &rounded.b,
                                 nullptr,    &rounded.h0, &rounded.c0, &rounded.p};
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (call.inputs[i].defined() && call.inputs[i].dtype() == DType::F32)
      call.inputs[i] = to_half(call.inputs[i], backs[i]);
  const Expected e = reference(c, rounded);
  auto r = run_op_threads(call, 1);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::F16);
  expect_close((*r)[0], e.y, 2e-3, 2e-3, "f16 Y");
  expect_close((*r)[1], e.yh, 2e-3, 2e-3, "f16 Y_h");
  expect_close((*r)[2], e.yc, 2e-3, 2e-3, "f16 Y_c");
}

TEST(LstmOp, EmptySequenceReturnsInitialState) {
  Case c;
  c.seq = 0;
  c.direction = "bidirectional";
  check_case(c, "lstm seq 0");
}

TEST(GruOp, DefaultAndLinearBeforeReset) {
  for (bool lbr : {false, true}) {
    Case c;
    c.op = "GRU";
    c.linear_before_reset = lbr;
    check_case(c, lbr ? "gru lbr" : "gru");
  }
}

TEST(GruOp, BidirectionalWithSequenceLengths) {
  for (bool lbr : {false, true}) {
    Case c;
    c.op = "GRU";
    c.direction = "bidirectional";
    c.linear_before_reset = lbr;
    c.lens = {2, 4, 3};
    check_case(c, lbr ? "gru bidirectional lens lbr" : "gru bidirectional lens");
  }
}

TEST(GruOp, ReverseLayout1WithClip) {
  Case c;
  c.op = "GRU";
  c.direction = "reverse";
  c.layout = 1;
  c.clip = 0.5f;
  c.lens = {4, 1, 3};
  check_case(c, "gru reverse layout 1");
}

TEST(GruOp, CustomActivations) {
  Case c;
  c.op = "GRU";
  c.act_names = {"Affine", "Softplus"};
  c.act_alpha = {0.25f};
  c.act_beta = {0.5f};
  c.acts = {[](double v) { return 0.25f * v + 0.5f; }, [](double v) { return std::log1p(std::exp(v)); }};
  check_case(c, "gru affine softplus");
}

TEST(RnnOp, ForwardReverseBidirectional) {
  for (const char* dir : {"forward", "reverse", "bidirectional"}) {
    Case c;
    c.op = "RNN";
    c.direction = dir;
    check_case(c, std::string("rnn ") + dir);
  }
}

TEST(RnnOp, Layout1WithSequenceLengths) {
  Case c;
  c.op = "RNN";
  c.direction = "bidirectional";
  c.layout = 1;
  c.lens = {1, 4, 0};
  check_case(c, "rnn layout 1 lens");
}

TEST(RnnOp, ActivationsSharedByBothDirections) {
  Case c;
  c.op = "RNN";
  c.direction = "bidirectional";
  c.act_names = {"ThresholdedRelu"};
  c.act_alpha = {0.1f};
  c.acts = {[](double v) { return v >= 0.1f ? v : 0.0; }};
  check_case(c, "rnn thresholded relu");
}

TEST(RecurrentOps, RejectsBadShapesAndAttributes) {
  Case c;
  const Data data = make_data(c);
  OpCall call = make_call(c, data);
  call.inputs[1] = make_tensor_f32({1, 4 * c.hidden, c.input + 1}, random_floats(4 * c.hidden * (c.input + 1), 3));
  auto r = run_op_threads(call, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument);
  EXPECT_NE(r.error().message().find("'W'"), std::string::npos) << r.error().message();

  call = make_call(c, data);
  call.inputs[3] = make_tensor_f32({1, 3}, {1, 2, 3});
  r = run_op_threads(call, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("'B'"), std::string::npos) << r.error().message();

  call = make_call(c, data);
  call.attrs.set("direction", attr_string("sideways"));
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);

  call = make_call(c, data);
  Attribute acts;
  acts.kind = Attribute::Kind::Strings;
  acts.strings = {"Sigmoid", "Tanh", "Gelu"};
  call.attrs.set("activations", acts);
  EXPECT_EQ(status_of(call), StatusCode::Unsupported);

  call = make_call(c, data);
  call.inputs[4] = make_tensor<int32_t>({c.batch}, {1, 5, 2});  // 5 > seq
  EXPECT_EQ(status_of(call), StatusCode::InvalidArgument);
}

TEST(RecurrentOps, OutputShapesPerLayout) {
  Case c;
  c.op = "GRU";
  c.direction = "bidirectional";
  for (int64_t layout : {0, 1}) {
    c.layout = layout;
    auto r = run_op_threads(make_call(c, make_data(c)), 1);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    const Shape y = layout == 0 ? Shape{4, 2, 3, 5} : Shape{3, 4, 2, 5};
    const Shape s = layout == 0 ? Shape{2, 3, 5} : Shape{3, 2, 5};
    EXPECT_EQ((*r)[0].shape(), y);
    EXPECT_EQ((*r)[1].shape(), s);
  }
}

}  // namespace
}  // namespace ignis::nn_test
