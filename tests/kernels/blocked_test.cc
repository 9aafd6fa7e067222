// SPDX-License-Identifier: Apache-2.0
// Tests for the ai.ignis blocked channel layout ops (docs/ops_ai_ignis.md, "Blocked channel
// layout"): exact element placement of BlockChannels / UnblockChannels, BlockedConv's
// reference kernel against a direct convolution loop written here (in double) on blocked
// operands whose padded lanes hold garbage, BlockedMaxPool against ai.onnx MaxPool on the
// unblocked values, shape-inference errors, and a run of every consistency case
// (tests/kernels/cases/blocked.cc) through the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cases/cases.h"
#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr float kGarbage = 1000.0f;  // in padded input lanes, which every op must ignore

OpCall blocked_op(const std::string& op, std::vector<Tensor> inputs) {
  OpCall c;
  c.op_type = op;
  c.domain = "ai.ignis";
  c.opset = 1;
  c.inputs = std::move(inputs);
  return c;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// NCHW... values [N, C, S] (S positions) in the blocked layout [N, ceil(C / b), S, b], with
// `pad` in the lanes past channel C.
template <class T>
std::vector<T> to_blocked(const std::vector<T>& v, int64_t n, int64_t c, int64_t s, int64_t b, T pad) {
  const int64_t cb = ceil_div(c, b);
  std::vector<T> out(static_cast<size_t>(n * cb * s * b), pad);
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t p = 0; p < s; ++p) out[((ni * cb + ci / b) * s + p) * b + ci % b] = v[(ni * c + ci) * s + p];
  return out;
}

// ---- BlockChannels / UnblockChannels ----------------------------------------------------------

// Distinct, exactly representable values: element i holds i + 1.
Tensor iota_tensor(const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return make_tensor_f32(shape, v);
}

TEST(BlockChannels, PlacesEachChannelInItsLaneAndZeroesPaddedLanes) {
  for (int64_t block : {16, 8})
    for (int64_t c : {1, 15, 16, 17, 40})
      for (const Shape& x_shape : {Shape{2, c, 5}, Shape{2, c, 3, 2}}) {
        const std::string what = "C=" + std::to_string(c) + " block=" + std::to_string(block) + " X" + x_shape.str();
        const Tensor x = iota_tensor(x_shape);
        OpCall call = blocked_op("BlockChannels", {x});
        if (block != 16) call.attrs.set("block", attr_int(block));
        const int64_t cb = ceil_div(c, block), s = x_shape.numel() / (2 * c);
        Shape want_shape{2, cb};
        for (int i = 2; i < x_shape.rank(); ++i) want_shape.push_back(x_shape[i]);
        want_shape.push_back(block);
        for (int threads : {1, 3}) {
          auto r = run_op_threads(call, threads);
          ASSERT_TRUE(r) << what << ": " << r.error().to_string();
          const Tensor& y = (*r)[0];
          ASSERT_EQ(y.shape(), want_shape) << what;
          const float* ys = y.data_as<float>();
          const float* xs = x.data_as<float>();
          for (int64_t n = 0; n < 2; ++n)
            for (int64_t b = 0; b < cb; ++b)
              for (int64_t p = 0; p < s; ++p)
                for (int64_t l = 0; l < block; ++l) {
                  const int64_t ch = b * block + l;
                  const float want = ch < c ? xs[(n * c + ch) * s + p] : 0.0f;
                  const float got = ys[((n * cb + b) * s + p) * block + l];
                  ASSERT_EQ(got, want) << what << " at n=" << n << " block " << b << " position " << p << " lane " << l;
                  if (ch >= c) {
                    ASSERT_FALSE(std::signbit(got)) << what << ": padded lane is -0";
                  }
                }
        }
        // And back: UnblockChannels restores X exactly.
        OpCall back = blocked_op("UnblockChannels", {run1(call)});
        back.attrs.set("channels", attr_int(c));
        if (block != 16) back.attrs.set("block", attr_int(block));
        const Tensor round_trip = run1(back);
        ASSERT_EQ(round_trip.shape(), x_shape) << what;
        EXPECT_EQ(values_of<float>(round_trip), values_of<float>(x)) << what;
      }
}

TEST(UnblockChannels, ReadsEachChannelFromItsLaneAndDropsPaddedLanes) {
  for (int64_t block : {16, 8})
    for (int64_t c : {1, 15, 16, 17, 40})
      for (const Shape& spatial : {Shape{4}, Shape{3, 2}}) {
        const int64_t cb = ceil_div(c, block), s = spatial.numel();
        Shape x_shape{2, cb};
        for (int i = 0; i < spatial.rank(); ++i) x_shape.push_back(spatial[i]);
        x_shape.push_back(block);
        const Tensor x = iota_tensor(x_shape);  // padded lanes hold values too
        OpCall call = blocked_op("UnblockChannels", {x});
        call.attrs.set("channels", attr_int(c));
        call.attrs.set("block", attr_int(block));
        const Tensor y = run1(call);
        Shape want_shape{2, c};
        for (int i = 0; i < spatial.rank(); ++i) want_shape.push_back(spatial[i]);
        ASSERT_EQ(y.shape(), want_shape);
        const float* xs = x.data_as<float>();
        std::vector<float> want;
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < s; ++p) want.push_back(xs[((n * cb + ch / block) * s + p) * block + ch % block]);
        EXPECT_EQ(values_of<float>(y), want) << "C=" << c << " block=" << block << " X" << x_shape.str();
      }
}

// The error of `call`'s shape inference; fails the test when the call succeeds.
std::string error_of(const OpCall& call) {
  auto r = run_op_threads(call, 1);
  if (r) {
    ADD_FAILURE() << call.op_type << " unexpectedly succeeded";
    return "";
  }
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << r.error().to_string();
  return r.error().message();
}

TEST(BlockChannels, RejectsLowRanksAndBadBlocks) {
  EXPECT_NE(error_of(blocked_op("BlockChannels", {random_tensor({2, 16}, 1)})).find("rank >= 3"), std::string::npos);
  OpCall zero = blocked_op("BlockChannels", {random_tensor({1, 16, 2}, 2)});
  zero.attrs.set("block", attr_int(0));
  EXPECT_NE(error_of(zero).find("'block' must be >= 1, got 0"), std::string::npos);
  OpCall kind = blocked_op("BlockChannels", {random_tensor({1, 16, 2}, 2)});
  kind.attrs.set("block", attr_float(16.0f));
  EXPECT_NE(error_of(kind).find("'block' must be an int"), std::string::npos);
}

TEST(UnblockChannels, RejectsMissingChannelsAndMismatchedBlocks) {
  const Tensor x = random_tensor({1, 2, 3, 3, 16}, 1);
  EXPECT_NE(error_of(blocked_op("UnblockChannels", {x})).find("'channels' is required"), std::string::npos);
  OpCall too_many = blocked_op("UnblockChannels", {x});
  too_many.attrs.set("channels", attr_int(40));
  EXPECT_NE(error_of(too_many).find("channel blocks 2 must equal ceil(channels 40 / block 16) = 3"),
            std::string::npos);
  OpCall too_few = blocked_op("UnblockChannels", {x});
  too_few.attrs.set("channels", attr_int(16));
  EXPECT_NE(error_of(too_few).find("channel blocks 2 must equal ceil(channels 16 / block 16) = 1"),
            std::string::npos);
  OpCall lanes = blocked_op("UnblockChannels", {x});
  lanes.attrs.set("channels", attr_int(8));
  lanes.attrs.set("block", attr_int(8));
  EXPECT_NE(error_of(lanes).find("last dim 16 must equal block 8"), std::string::npos);
  OpCall rank = blocked_op("UnblockChannels", {random_tensor({1, 1, 16}, 2)});
  rank.attrs.set("channels", attr_int(16));
  EXPECT_NE(error_of(rank).find("rank >= 4"), std::string::npos);
  OpCall zero = blocked_op("UnblockChannels", {x});
  zero.attrs.set("channels", attr_int(0));
  EXPECT_NE(error_of(zero).find("'channels' must be >= 1, got 0"), std::string::npos);
}

// ---- BlockedConv ------------------------------------------------------------------------------

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One BlockedConv configuration: NCHW operands generated here, blocked for the op.
struct ConvCase {
  int64_t n = 1, c = 0, h = 0, w = 0, m = 0;
  int64_t kernel = 1, stride = 1, pad = 0, group = 1, block = 16;
  bool bias = false, residual = false;
  std::string act = {};  // "", Relu, Clip (0..6), Sigmoid
};

std::string describe(const ConvCase& k) {
  return "C=" + std::to_string(k.c) + " M=" + std::to_string(k.m) + " " + std::to_string(k.h) + "x" +
         std::to_string(k.w) + " kernel " + std::to_string(k.kernel) + " stride " + std::to_string(k.stride) +
         " pad " + std::to_string(k.pad) + " group " + std::to_string(k.group) + " block " +
         std::to_string(k.block) + (k.bias ? " bias" : "") + (k.residual ? " residual" : "") + " act '" + k.act + "'";
}

// Runs BlockedConv on the case and compares every element of Y, padded lanes included, with
// the blocked act(conv(X, W) + B + Z) computed by a direct loop.
void expect_blocked_conv_matches_direct_loop(const ConvCase& k, uint32_t seed) {
  const std::string what = describe(k);
  const int64_t oh = (k.h + 2 * k.pad - k.kernel) / k.stride + 1, ow = (k.w + 2 * k.pad - k.kernel) / k.stride + 1;
  const int64_t cg = k.c / k.group, mg = k.m / k.group;
  const std::vector<float> x = random_floats(k.n * k.c * k.h * k.w, seed, -2.0f, 2.0f);
  const std::vector<float> w = random_floats(k.m * cg * k.kernel * k.kernel, seed + 1);
  const std::vector<float> b = random_floats(k.m, seed + 2);
  const std::vector<float> z = random_floats(k.n * k.m * oh * ow, seed + 3);
  std::vector<double> want(static_cast<size_t>(k.n * k.m * oh * ow));
  for (int64_t ni = 0; ni < k.n; ++ni)
    for (int64_t mi = 0; mi < k.m; ++mi)
      for (int64_t yo = 0; yo < oh; ++yo)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = k.bias ? b[mi] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < k.kernel; ++ky)
              for (int64_t kx = 0; kx < k.kernel; ++kx) {
                const int64_t yi = yo * k.stride - k.pad + ky, xi = xo * k.stride - k.pad + kx;
                if (yi < 0 || yi >= k.h || xi < 0 || xi >= k.w) continue;
                s += static_cast<double>(x[((ni * k.c + mi / mg * cg + ci) * k.h + yi) * k.w + xi]) *
                     w[((mi * cg + ci) * k.kernel + ky) * k.kernel + kx];
              }
          const size_t o = static_cast<size_t>(((ni * k.m + mi) * oh + yo) * ow + xo);
          if (k.residual) s += z[o];
          if (k.act == "Relu") s = std::max(s, 0.0);
          if (k.act == "Clip") s = std::min(std::max(s, 0.0), 6.0);
          if (k.act == "Sigmoid") s = sigmoid(s);
          want[o] = s;
        }

  OpCall call = blocked_op(
      "BlockedConv",
      {make_tensor_f32({k.n, ceil_div(k.c, k.block), k.h, k.w, k.block},
                       to_blocked(x, k.n, k.c, k.h * k.w, k.block, kGarbage)),
       make_tensor_f32({k.m, cg, k.kernel, k.kernel}, w)});
  if (k.bias || k.residual) call.inputs.push_back(k.bias ? make_tensor_f32({k.m}, b) : Tensor());
  if (k.residual)
    call.inputs.push_back(make_tensor_f32({k.n, ceil_div(k.m, k.block), oh, ow, k.block},
                                          to_blocked(z, k.n, k.m, oh * ow, k.block, kGarbage)));
  if (k.block != 16) call.attrs.set("block", attr_int(k.block));
  if (k.group != 1) call.attrs.set("group", attr_int(k.group));
  if (k.stride != 1) call.attrs.set("strides", attr_ints({k.stride, k.stride}));
  if (k.pad != 0) call.attrs.set("pads", attr_ints({k.pad, k.pad, k.pad, k.pad}));
  if (!k.act.empty()) call.attrs.set("activation", attr_string(k.act));
  if (k.act == "Clip") {
    call.attrs.set("activation_min", attr_float(0.0f));
    call.attrs.set("activation_max", attr_float(6.0f));
  }
  const std::vector<double> want_blocked = to_blocked(want, k.n, k.m, oh * ow, k.block, 0.0);
  for (int threads : {1, 3}) {
    auto r = run_op_threads(call, threads);
    ASSERT_TRUE(r) << what << ": " << r.error().to_string();
    const Tensor& y = (*r)[0];
    ASSERT_EQ(y.shape(), (Shape{k.n, ceil_div(k.m, k.block), oh, ow, k.block})) << what;
    expect_close(y, want_blocked, 1e-5, 1e-5, what);
    // Padded lanes exactly +0, whatever the activation maps 0 to.
    const float* ys = y.data_as<float>();
    for (int64_t i = 0; i < y.numel(); ++i)
      if ((i / (oh * ow * k.block)) % ceil_div(k.m, k.block) * k.block + i % k.block >= k.m) {
        ASSERT_EQ(ys[i], 0.0f) << what << ": padded lane at element " << i;
        ASSERT_FALSE(std::signbit(ys[i])) << what << ": padded lane at element " << i << " is -0";
      }
  }
}

TEST(BlockedConv, PointwiseMatchesADirectLoop) {
  expect_blocked_conv_matches_direct_loop({.n = 2, .c = 24, .h = 5, .w = 6, .m = 40, .bias = true}, 10);
  expect_blocked_conv_matches_direct_loop({.n = 2, .c = 24, .h = 5, .w = 6, .m = 40}, 11);
}

TEST(BlockedConv, DepthwiseMatchesADirectLoop) {
  for (int64_t stride : {1, 2}) {
    expect_blocked_conv_matches_direct_loop(
        {.c = 20, .h = 9, .w = 8, .m = 20, .kernel = 3, .stride = stride, .pad = 1, .group = 20, .bias = true}, 20);
    expect_blocked_conv_matches_direct_loop(
        {.n = 2, .c = 20, .h = 7, .w = 10, .m = 20, .kernel = 5, .stride = stride, .pad = 2, .group = 20}, 21);
  }
}

TEST(BlockedConv, GeneralConvolutionMatchesADirectLoop) {
  expect_blocked_conv_matches_direct_loop({.c = 3, .h = 8, .w = 7, .m = 18, .kernel = 3, .pad = 1, .bias = true}, 30);
  expect_blocked_conv_matches_direct_loop({.c = 3, .h = 9, .w = 9, .m = 18, .kernel = 3, .stride = 2, .pad = 1}, 31);
  // Grouped, neither pointwise nor depthwise, with partial blocks on both sides.
  expect_blocked_conv_matches_direct_loop(
      {.c = 20, .h = 6, .w = 6, .m = 12, .kernel = 3, .pad = 1, .group = 4, .bias = true}, 32);
}

TEST(BlockedConv, AddsTheResidualAndAppliesActivationsLeavingPaddedLanesZero) {
  for (const std::string act : {"", "Relu", "Clip", "Sigmoid"})
    for (bool residual : {false, true}) {
      expect_blocked_conv_matches_direct_loop(
          {.n = 2, .c = 24, .h = 4, .w = 5, .m = 40, .bias = true, .residual = residual, .act = act}, 40);
      expect_blocked_conv_matches_direct_loop({.c = 20, .h = 7, .w = 7, .m = 20, .kernel = 3, .pad = 1, .group = 20,
                                               .bias = residual, .residual = residual, .act = act},
                                              41);
    }
  // A residual without a bias (B omitted).
  expect_blocked_conv_matches_direct_loop({.c = 17, .h = 3, .w = 3, .m = 17, .residual = true, .act = "Sigmoid"}, 42);
}

TEST(BlockedConv, WorksWithOtherBlockSizes) {
  for (int64_t block : {8, 1, 64})
    expect_blocked_conv_matches_direct_loop({.c = 20, .h = 5, .w = 5, .m = 12, .kernel = 3, .pad = 1, .block = block,
                                             .bias = true, .residual = true, .act = "Sigmoid"},
                                            50);
}

TEST(BlockedConv, RejectsMismatchedBlockedShapesNamingTheProblem) {
  const Tensor x = random_tensor({1, 2, 5, 5, 16}, 1);  // C = 24 or 32
  const Tensor w = random_tensor({40, 24, 1, 1}, 2);
  const Tensor b = random_tensor({40}, 3);
  // W says C = 40: three blocks, X has two.
  EXPECT_NE(error_of(blocked_op("BlockedConv", {x, random_tensor({8, 40, 1, 1}, 4)}))
                .find("channel blocks 2 must equal ceil(C / block) = ceil(40 / 16) = 3"),
            std::string::npos);
  // Depthwise: C = 8 * group 5 = 40.
  OpCall depthwise = blocked_op("BlockedConv", {x, random_tensor({40, 8, 3, 3}, 5)});
  depthwise.attrs.set("group", attr_int(5));
  EXPECT_NE(error_of(depthwise).find("W's 8 per group times group 5"), std::string::npos);
  // Last dim is not the block.
  OpCall lanes = blocked_op("BlockedConv", {x, w});
  lanes.attrs.set("block", attr_int(8));
  EXPECT_NE(error_of(lanes).find("last dim 16 must equal block 8"), std::string::npos);
  // Ranks.
  EXPECT_NE(error_of(blocked_op("BlockedConv", {random_tensor({1, 24, 5, 5}, 6), w})).find("must be 5-D"),
            std::string::npos);
  EXPECT_NE(error_of(blocked_op("BlockedConv", {x, random_tensor({40, 24, 1, 1, 1}, 7)})).find("must be 4-D"),
            std::string::npos);
  // Z must have the blocked output shape [1, 3, 5, 5, 16], not the unblocked one.
  EXPECT_NE(error_of(blocked_op("BlockedConv", {x, w, b, random_tensor({1, 40, 5, 5}, 8)}))
                .find("input 3 ('Z') must have the blocked output shape [1, 3, 5, 5, 16], got [1, 40, 5, 5]"),
            std::string::npos);
  EXPECT_NE(error_of(blocked_op("BlockedConv", {x, w, b, random_tensor({1, 2, 5, 5, 16}, 9)})).find("'Z'"),
            std::string::npos);
  // FusedConv's own checks, reported on the unblocked tensors.
  const std::string bias = error_of(blocked_op("BlockedConv", {x, w, random_tensor({24}, 10)}));
  EXPECT_NE(bias.find("as FusedConv on the unblocked X [1, 24, 5, 5]"), std::string::npos) << bias;
  EXPECT_NE(bias.find("input 2 ('B') must have shape [40], got [24]"), std::string::npos) << bias;
  EXPECT_NE(bias.find("(BlockedConv, opset 1)"), std::string::npos) << bias;
  OpCall act = blocked_op("BlockedConv", {x, w});
  act.attrs.set("activation", attr_string("Tanh"));
  EXPECT_NE(error_of(act).find("attribute 'activation' must be one of"), std::string::npos);
  OpCall strides = blocked_op("BlockedConv", {x, w});
  strides.attrs.set("strides", attr_ints({1}));
  EXPECT_FALSE(error_of(strides).empty());
  Tensor xd = Tensor::empty(DType::F64, {1, 2, 5, 5, 16});
  EXPECT_EQ(status_of(blocked_op("BlockedConv", {xd, w})), StatusCode::Unsupported);
}

// ---- BlockedMaxPool --------------------------------------------------------------------------

// Blocked values [N, CB, S, b] -> [N, CB * b, S], every lane a channel.
std::vector<float> all_lanes_unblocked(const float* x, int64_t n, int64_t cb, int64_t s, int64_t b) {
  std::vector<float> out(static_cast<size_t>(n * cb * b * s));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t ci = 0; ci < cb * b; ++ci)
      for (int64_t p = 0; p < s; ++p) out[(ni * cb * b + ci) * s + p] = x[((ni * cb + ci / b) * s + p) * b + ci % b];
  return out;
}

void pools_each_lane_as_max_pool(const kernels::KernelDef* def) {
  const std::string name = def ? std::string(def->id) : "run_op's kernel";
  uint32_t seed = 40;
  for (const kernel_cases::KernelCase& kc : kernel_cases::blocked_max_pool_cases()) {
    const Shape& xs = kc.inputs[0];
    const int64_t n = xs[0], cb = xs[1], h = xs[2], w = xs[3], b = xs[4];
    Tensor x = random_tensor(xs, seed++);
    float* xv = x.data_as<float>();
    for (int64_t i = 0; i < x.numel(); i += 37) xv[i] = NAN;  // NaN taps lose to numbers
    OpCall blocked = blocked_op("BlockedMaxPool", {x});
    blocked.attrs = kc.attrs;
    Tensor y;
    if (def == nullptr) {
      y = run1(blocked);
    } else {
      auto r = run_op_with(blocked, [&](const std::vector<DType>&) { return def; }, name);
      ASSERT_TRUE(r.has_value()) << name << ": " << r.error().to_string();
      y = (*r)[0];
    }
    OpCall plain;
    plain.op_type = "MaxPool";
    plain.opset = 12;
    plain.attrs = kc.attrs;
    plain.inputs = {make_tensor_f32({n, cb * b, h, w}, all_lanes_unblocked(xv, n, cb, h * w, b))};
    const Tensor yu = run1(plain);
    ASSERT_EQ(y.rank(), 5) << kc.label;
    ASSERT_EQ(y.shape(), Shape({n, cb, yu.dim(2), yu.dim(3), b})) << kc.label;
    const std::vector<float> got = all_lanes_unblocked(y.data_as<float>(), n, cb, yu.dim(2) * yu.dim(3), b);
    for (int64_t i = 0; i < yu.numel(); ++i) {
      const float want = yu.data_as<float>()[i];
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got[i])) << name << " " << kc.label << " at " << i;
      else EXPECT_EQ(got[i], want) << name << " " << kc.label << " at " << i;
    }
  }
}

// Every consistency case: the blocked pool, by the reference kernel and by each x86 one this
// CPU runs, equals MaxPool-12 (its reference kernel) run on the unblocked values with the
// same attributes, lane for lane, NaN inputs included.
TEST(BlockedMaxPool, PoolsEachLaneAsMaxPoolDoesOnTheUnblockedValues) {
  std::vector<const kernels::KernelDef*> kernels = {nullptr};  // null: run_op's choice
  for (const char* id : {"x86/blockedmaxpool_f32_avx2", "x86/blockedmaxpool_f32_avx512"}) {
    const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
    if (def != nullptr && kernels::isa_enabled(def->isa)) kernels.push_back(def);
  }
  for (const kernels::KernelDef* def : kernels) pools_each_lane_as_max_pool(def);
}

TEST(BlockedMaxPool, RejectsBadShapesAndTheIndicesOutputNamingTheProblem) {
  auto pool = [](Tensor x) {
    OpCall c = blocked_op("BlockedMaxPool", {std::move(x)});
    c.attrs.set("kernel_shape", attr_ints({3, 3}));
    return c;
  };
  EXPECT_NE(error_of(pool(random_tensor({1, 32, 5, 5}, 1))).find("must be 5-D"), std::string::npos);
  EXPECT_NE(error_of(pool(random_tensor({1, 2, 5, 5, 8}, 2))).find("last dim 8 must equal block 16"),
            std::string::npos);
  OpCall indices = pool(random_tensor({1, 2, 5, 5, 16}, 3));
  indices.num_outputs = 2;
  EXPECT_NE(error_of(indices).find("one output"), std::string::npos);
  // MaxPool's own checks, reported on the unblocked X.
  const std::string window = error_of(pool(random_tensor({1, 2, 2, 2, 16}, 4)));
  EXPECT_NE(window.find("as MaxPool on the unblocked X [1, 32, 2, 2]"), std::string::npos) << window;
  EXPECT_NE(window.find("(BlockedMaxPool, opset 1)"), std::string::npos) << window;
}

// ---- the consistency cases ----------------------------------------------------------------------

// Every case of tests/kernels/cases/blocked.cc passes shape inference and runs on the
// reference kernel, so the cases are sound before an optimized kernel is compared on them;
// BlockedConv's padded output lanes come out zero.
TEST(BlockedCases, RunOnTheReferenceKernels) {
  const std::pair<const char*, kernel_cases::CaseGenerator> generators[] = {
      {"BlockedConv", kernel_cases::blocked_conv_cases},
      {"BlockChannels", kernel_cases::block_channels_cases},
      {"UnblockChannels", kernel_cases::unblock_channels_cases},
      {"BlockedMaxPool", kernel_cases::blocked_max_pool_cases}};
  for (const auto& [op, generate] : generators) {
    const std::vector<kernel_cases::KernelCase> cases = generate();
    EXPECT_FALSE(cases.empty()) << op;
    uint32_t seed = 100;
    for (const kernel_cases::KernelCase& kc : cases) {
      EXPECT_EQ(kc.op_type, op);
      OpCall call = blocked_op(kc.op_type, {});
      call.opset = kc.opset;
      call.attrs = kc.attrs;
      for (const Shape& s : kc.inputs) call.inputs.push_back(random_tensor(s, seed++));
      auto r = run_op_threads(call, 2);
      ASSERT_TRUE(r) << op << " " << kc.label << ": " << r.error().to_string();
      const Tensor& y = (*r)[0];
      const float* ys = y.data_as<float>();
      for (int64_t i = 0; i < y.numel(); ++i) ASSERT_TRUE(std::isfinite(ys[i])) << op << " " << kc.label;
      if (kc.op_type != "UnblockChannels" && kc.op_type != "BlockedMaxPool") {  // the pool takes every lane
        const int64_t channels = kc.op_type == "BlockedConv" ? kc.inputs[1][0] : kc.inputs[0][1];
        const int64_t lanes = y.shape().back(), blocks = y.dim(1), per_block = y.numel() / (y.dim(0) * blocks);
        for (int64_t i = 0; i < y.numel(); ++i)
          if (i / per_block % blocks * lanes + i % lanes >= channels) {
            ASSERT_EQ(ys[i], 0.0f) << op << " " << kc.label << ": padded lane at element " << i;
          }
      }
    }
  }
}

}  // namespace
}  // namespace ignis::nn_test
