// SPDX-License-Identifier: Apache-2.0
// The int8 depthwise convolution with output positions in the vector lanes
// (conv_int8_depthwise_permute_avx512vbmi.cc) against the reference QLinearConv, byte for byte:
// random geometries it takes (3x3 and 5x5, strides 1 and 2, dilations, asymmetric pads, odd
// and wide planes), uint8 and int8 activations and outputs, per-tensor and per-channel
// weights, nonzero x zero points, with and without bias, batches of 2; through the x86
// QLinearConv kernel (weights constant or not, one thread and two), and called directly with
// guard bytes after its output and scratch.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/strings.h"
#include "kernels/nn_test_util.h"
#include "kernels/registry.h"
#include "kernels/x86/conv_int8.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xA5;

struct Case {
  int64_t n, c, ih, iw, k, s, d;
  int64_t pads[4];  // top, left, bottom, right
  bool x_signed, y_signed, w_signed, per_channel, bias;
  int32_t x_zp, y_zp;

  ConvGeometry2d geometry() const {
    ConvGeometry2d g;
    g.ih = ih;
    g.iw = iw;
    g.kh = g.kw = k;
    g.sh = g.sw = s;
    g.dh = g.dw = d;
    g.ph = pads[0];
    g.pw = pads[1];
    g.oh = (ih + pads[0] + pads[2] - (k - 1) * d - 1) / s + 1;
    g.ow = (iw + pads[1] + pads[3] - (k - 1) * d - 1) / s + 1;
    return g;
  }
  std::string label() const {
    return str_cat(n, "x", c, "x", ih, "x", iw, " k", k, " s", s, " d", d, " pads ", pads[0], ",", pads[1], ",",
                   pads[2], ",", pads[3], x_signed ? " x s8" : " x u8", y_signed ? " y s8" : " y u8",
                   w_signed ? " w s8" : " w u8", per_channel ? " per-channel" : " per-tensor", bias ? " bias" : "",
                   " x_zp ", x_zp);
  }
};

// Random cases the kernel takes, and a few fixed shapes (MobileNet's planes, odd sizes).
std::vector<Case> cases() {
  std::mt19937 rng(20261202);
  const auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<Case> out;
  const int64_t fixed[][7] = {{1, 3, 7, 7, 3, 1, 1},   {2, 5, 13, 17, 3, 2, 1}, {1, 2, 112, 112, 3, 2, 1},
                              {1, 3, 112, 40, 3, 1, 1}, {2, 4, 14, 14, 5, 1, 1}, {1, 3, 28, 28, 5, 2, 1},
                              {1, 2, 19, 23, 3, 1, 2},  {1, 2, 9, 70, 5, 2, 2}};
  for (int i = 0; i < 48; ++i) {
    Case c{};
    if (i < static_cast<int>(std::size(fixed))) {
      const int64_t* f = fixed[i];
      c.n = f[0], c.c = f[1], c.ih = f[2], c.iw = f[3], c.k = f[4], c.s = f[5], c.d = f[6];
    } else {
      c.n = pick(1, 2), c.c = pick(1, 6), c.ih = pick(1, 40), c.iw = pick(1, 40);
      c.k = pick(0, 1) ? 5 : 3, c.s = pick(1, 2), c.d = pick(1, 2);
    }
    for (int64_t& p : c.pads) p = pick(0, 2);
    c.x_signed = i % 2 == 1;
    c.y_signed = i % 4 >= 2;
    c.w_signed = i % 8 < 6;
    c.per_channel = i % 3 != 0;
    c.bias = i % 5 != 0;
    c.x_zp = static_cast<int32_t>(c.x_signed ? pick(-100, 100) : pick(1, 250));
    c.y_zp = static_cast<int32_t>(c.y_signed ? pick(-20, 20) : pick(0, 40));
    const int64_t window = (c.k - 1) * c.d + 1;
    if (c.ih + c.pads[0] + c.pads[2] < window || c.iw + c.pads[1] + c.pads[3] < window) continue;
    if (!conv_int8_depthwise_vbmi_supported(c.geometry())) continue;
    out.push_back(c);
  }
  return out;
}

struct Inputs {
  nn_test::OpCall call;
  DepthwiseInt8Channels p;  // less x, y and the per-channel arrays
  std::vector<int32_t> centered, bias;
  std::vector<float> multiplier;
};

template <class T>
Tensor byte_tensor(const Shape& shape, const std::vector<int32_t>& v) {
  std::vector<T> b(v.begin(), v.end());
  return nn_test::make_tensor<T>(shape, b);
}

// The op's inputs: weights whose values less their zero points fit int8 (the kernel's
// condition), scales that put outputs around the output range.
Inputs make_inputs(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  const int64_t taps = c.k * c.k, wzps = c.per_channel ? c.c : 1;
  std::vector<int32_t> x(static_cast<size_t>(c.n * c.c * c.ih * c.iw)), w(static_cast<size_t>(c.c * taps)),
      wzp(static_cast<size_t>(wzps)), bias(static_cast<size_t>(c.c));
  for (int32_t& v : x) v = c.x_signed ? pick(-128, 127) : pick(0, 255);
  for (int32_t& z : wzp) z = c.w_signed ? pick(-20, 20) : pick(100, 150);
  for (int64_t ch = 0; ch < c.c; ++ch)
    for (int64_t t = 0; t < taps; ++t)
      w[static_cast<size_t>(ch * taps + t)] = wzp[static_cast<size_t>(c.per_channel ? ch : 0)] + pick(-100, 100);
  for (int32_t& b : bias) b = pick(-30000, 30000);
  std::vector<float> w_scale(static_cast<size_t>(wzps));
  for (float& s : w_scale) s = 0.002f + 0.006f * static_cast<float>(pick(0, 1000)) / 1000.0f;
  // Every seventh case with a multiplier near 10^4: every output saturates, and the float32
  // estimate is not used.
  const float x_scale = 0.02f, y_scale = seed % 7 == 0 ? 1e-8f : 0.0004f * static_cast<float>(c.k) * 16.0f;

  Inputs in;
  nn_test::OpCall& call = in.call;
  call.op_type = "QLinearConv";
  call.opset = 10;
  const Shape xs{c.n, c.c, c.ih, c.iw}, ws{c.c, 1, c.k, c.k}, zs = c.per_channel ? Shape{c.c} : Shape{};
  call.inputs.push_back(c.x_signed ? byte_tensor<int8_t>(xs, x) : byte_tensor<uint8_t>(xs, x));
  call.inputs.push_back(nn_test::make_tensor_f32(Shape{}, {x_scale}));
  call.inputs.push_back(c.x_signed ? byte_tensor<int8_t>(Shape{}, {c.x_zp}) : byte_tensor<uint8_t>(Shape{}, {c.x_zp}));
  call.inputs.push_back(c.w_signed ? byte_tensor<int8_t>(ws, w) : byte_tensor<uint8_t>(ws, w));
  call.inputs.push_back(nn_test::make_tensor_f32(zs, w_scale));
  call.inputs.push_back(c.w_signed ? byte_tensor<int8_t>(zs, wzp) : byte_tensor<uint8_t>(zs, wzp));
  call.inputs.push_back(nn_test::make_tensor_f32(Shape{}, {y_scale}));
  call.inputs.push_back(c.y_signed ? byte_tensor<int8_t>(Shape{}, {c.y_zp}) : byte_tensor<uint8_t>(Shape{}, {c.y_zp}));
  if (c.bias) call.inputs.push_back(nn_test::make_tensor<int32_t>(Shape{c.c}, bias));
  call.attrs.set("group", nn_test::attr_int(c.c));
  call.attrs.set("kernel_shape", nn_test::attr_ints({c.k, c.k}));
  call.attrs.set("strides", nn_test::attr_ints({c.s, c.s}));
  call.attrs.set("dilations", nn_test::attr_ints({c.d, c.d}));
  call.attrs.set("pads", nn_test::attr_ints({c.pads[0], c.pads[1], c.pads[2], c.pads[3]}));

  // The kernel's own arguments, computed as the x86 QLinearConv kernel does.
  for (int64_t ch = 0; ch < c.c; ++ch) {
    for (int64_t t = 0; t < taps; ++t)
      in.centered.push_back(w[static_cast<size_t>(ch * taps + t)] - wzp[static_cast<size_t>(c.per_channel ? ch : 0)]);
    in.multiplier.push_back(x_scale * w_scale[static_cast<size_t>(c.per_channel ? ch : 0)] / y_scale);
  }
  in.bias = bias;
  in.p.x_zero_point = c.x_zp;
  in.p.y_zero_point = c.y_zp;
  in.p.q_min = c.y_signed ? -128 : 0;
  in.p.q_max = c.y_signed ? 127 : 255;
  in.p.x_signed = c.x_signed;
  in.p.y_signed = c.y_signed;
  return in;
}

bool vbmi_cpu() {
  const CpuFeatures& f = cpu_features();
  return isa_enabled(Isa::Avx512) && f.avx512vbmi && f.avx512vnni && f.avx512bw;
}

TEST(ConvInt8DepthwiseVbmi, MatchesReferenceThroughQLinearConv) {
  if (!vbmi_cpu()) GTEST_SKIP() << "this CPU lacks AVX-512 VBMI + VNNI";
  const KernelDef* x86 = KernelRegistry::global().find_by_id("x86/qlinearconv_u8s8");
  ASSERT_NE(x86, nullptr);
  const std::vector<Case> all = cases();
  ASSERT_GE(all.size(), 30u);
  uint32_t seed = 1;
  for (const Case& c : all) {
    const Inputs in = make_inputs(c, seed++);
    const Tensor want = nn_test::run1(in.call);
    for (int threads : {1, 2})
      for (bool weights_constant : {true, false}) {
        auto got = testing::run_op_with(in.call, [&](const std::vector<DType>&) { return x86; }, "x86", threads,
                                        !weights_constant);
        ASSERT_TRUE(got.has_value()) << c.label() << ": " << got.error().to_string();
        const Tensor& y = (*got)[0];
        ASSERT_EQ(y.numel(), want.numel()) << c.label();
        ASSERT_EQ(std::memcmp(y.data(), want.data(), static_cast<size_t>(want.numel())), 0)
            << c.label() << " threads " << threads << (weights_constant ? " constant weights" : " weights at run time");
      }
  }
}

TEST(ConvInt8DepthwiseVbmi, StaysInBoundsCalledDirectly) {
  if (!vbmi_cpu()) GTEST_SKIP() << "this CPU lacks AVX-512 VBMI + VNNI";
  uint32_t seed = 1000;
  for (const Case& c : cases()) {
    Inputs in = make_inputs(c, seed++);
    const Tensor want = nn_test::run1(in.call);
    const ConvGeometry2d g = c.geometry();
    const size_t scratch_bytes = conv_int8_depthwise_vbmi_scratch(g), out_plane = static_cast<size_t>(g.oh * g.ow);
    std::vector<uint8_t> scratch(scratch_bytes + kGuard, kGuardByte);
    std::vector<uint8_t> y(static_cast<size_t>(c.c) * out_plane + kGuard, kGuardByte);
    DepthwiseInt8Channels& p = in.p;
    p.w = in.centered.data();
    p.bias = c.bias ? in.bias.data() : nullptr;
    p.multiplier = in.multiplier.data();
    for (int64_t image = 0; image < c.n; ++image) {
      p.x = static_cast<const uint8_t*>(in.call.inputs[0].data()) + image * c.c * c.ih * c.iw;
      p.y = y.data();
      // The channels in two calls (a thread's share of the planes), the first starting past 0.
      const int64_t split = c.c / 2;
      conv_int8_depthwise_vbmi(g, p, split, c.c, scratch.data());
      conv_int8_depthwise_vbmi(g, p, 0, split, scratch.data());
      for (size_t i = 0; i < kGuard; ++i) {
        ASSERT_EQ(scratch[scratch_bytes + i], kGuardByte) << c.label() << ": scratch written past its end";
        ASSERT_EQ(y[y.size() - kGuard + i], kGuardByte) << c.label() << ": output written past its end";
      }
      const auto* ref = static_cast<const uint8_t*>(want.data()) + image * c.c * static_cast<int64_t>(out_plane);
      ASSERT_EQ(std::memcmp(y.data(), ref, static_cast<size_t>(c.c) * out_plane), 0) << c.label() << " image " << image;
    }
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
