// SPDX-License-Identifier: Apache-2.0
// The bfloat16 pointwise convolution on the blocked channel layout
// (blocked_pointwise_avx512bf16, conv_blocked_avx512bf16.cc) against a double-precision product
// of the bfloat16-rounded input and weights: channel counts off the 16-channel block and the
// 32-channel pair (odd ones too), position counts off the 12-position tile, sub-ranges of
// positions and pairs, bias, residual and Relu; padded output lanes are zero and nothing
// outside the computed range is written. Then the BlockedConv kernel of a bfloat16 session on
// the windows its direct path runs in bfloat16 (blocked_direct_avx512bf16: dense, strided,
// grouped, sub-block groups, 3x3s with too few Winograd tiles), on strided 1x1s (the
// subsampled pointwise path) and on stride-2 stems over plain images
// (blocked_plain_avx512bf16), against the same kind of reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/attribute.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/nn_test_util.h"
#include "kernels/registry.h"
#include "kernels/x86/conv_blocked.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

using nn_test::random_floats;

double rounded(float v) { return static_cast<double>(bf16_to_float(float_to_bf16(v))); }

// 64-byte aligned floats.
struct Buffer {
  explicit Buffer(size_t n) : v(n + 16) {}
  float* data() { return reinterpret_cast<float*>(align_up(reinterpret_cast<size_t>(v.data()), 64)); }
  std::vector<float> v;
};

TEST(BlockedPointwiseBf16, MatchesRoundedReference) {
  if (!(isa_enabled(Isa::Avx512) && cpu_features().avx512bf16)) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  struct Case {
    int64_t c, m, positions;
    int64_t p0, p1, j0, j1;  // j1 < 0: every pair
    bool residual;
  };
  const Case cases[] = {{32, 32, 12, 0, 12, 0, -1, false}, {45, 70, 49, 0, 49, 0, -1, true},
                        {37, 17, 25, 12, 25, 0, -1, true}, {96, 100, 30, 0, 30, 1, 3, false},
                        {33, 48, 7, 0, 7, 0, -1, true},    {160, 31, 13, 0, 13, 0, -1, false}};
  uint32_t seed = 1;
  for (const Case& cs : cases) {
    const std::string where = "c=" + std::to_string(cs.c) + " m=" + std::to_string(cs.m) +
                              " positions=" + std::to_string(cs.positions);
    const int64_t cb = channel_blocks(cs.c), mb = channel_blocks(cs.m), pairs = (mb + 1) / 2;
    const int64_t j1 = cs.j1 < 0 ? pairs : cs.j1;
    const std::vector<float> w = random_floats(cs.m * cs.c, seed++);
    const std::vector<float> xv = random_floats(cs.c * cs.positions, seed++);
    const std::vector<float> bias_v = random_floats(cs.m, seed++);
    const std::vector<float> res_v = random_floats(cs.m * cs.positions, seed++);
    // Blocked x [cb][positions][16] (zero past c), bias padded to whole pairs, residual blocked.
    Buffer x(static_cast<size_t>(cb * cs.positions * 16)), bias(static_cast<size_t>(pairs * 32)),
        res(static_cast<size_t>(mb * cs.positions * 16)), y(static_cast<size_t>(mb * cs.positions * 16)),
        packed(blocked_pointwise_bf16_packed_floats(cs.m, cs.c));
    std::fill_n(x.data(), cb * cs.positions * 16, 0.0f);
    std::fill_n(bias.data(), pairs * 32, 0.0f);
    std::fill_n(res.data(), mb * cs.positions * 16, 0.0f);
    const float poison = -777.0f;
    std::fill_n(y.data(), mb * cs.positions * 16, poison);
    for (int64_t ch = 0; ch < cs.c; ++ch)
      for (int64_t p = 0; p < cs.positions; ++p) x.data()[(ch / 16 * cs.positions + p) * 16 + ch % 16] = xv[ch * cs.positions + p];
    for (int64_t o = 0; o < cs.m; ++o) {
      bias.data()[o] = bias_v[o];
      for (int64_t p = 0; p < cs.positions; ++p)
        res.data()[(o / 16 * cs.positions + p) * 16 + o % 16] = res_v[o * cs.positions + p];
    }
    blocked_pointwise_bf16_pack(w.data(), cs.m, cs.c, packed.data());
    GemmEpilogue act;
    act.act = Activation::Relu;
    BlockedConvArgs a;
    a.x = x.data();
    a.w = packed.data();
    a.bias = bias.data();
    a.residual = cs.residual ? res.data() : nullptr;
    a.y = y.data();
    a.c = cs.c;
    a.m = cs.m;
    a.act = &act;
    blocked_pointwise_avx512bf16(a, cs.positions, cs.p0, cs.p1, cs.j0, j1);
    for (int64_t o = 0; o < mb * 16; ++o)
      for (int64_t p = 0; p < cs.positions; ++p) {
        const float got = y.data()[(o / 16 * cs.positions + p) * 16 + o % 16];
        const bool computed = p >= cs.p0 && p < cs.p1 && o / 32 >= cs.j0 && o / 32 < j1;
        if (!computed) {
          ASSERT_EQ(got, poison) << where << ": written outside the range at channel " << o << ", position " << p;
          continue;
        }
        if (o >= cs.m) {
          ASSERT_EQ(got, 0.0f) << where << ": padded lane " << o << " at position " << p;
          continue;
        }
        double want = bias_v[o], mag = 0.0;
        for (int64_t ch = 0; ch < cs.c; ++ch) {
          const double t = rounded(w[o * cs.c + ch]) * rounded(xv[ch * cs.positions + p]);
          want += t;
          mag += std::fabs(t);
        }
        if (cs.residual) want += res_v[o * cs.positions + p];
        want = std::max(0.0, want);
        ASSERT_NEAR(got, want, 1e-6 * (mag + 1.0)) << where << ": channel " << o << ", position " << p;
      }
  }
}

// A BlockedConv case: X [n, c, h, w] (blocked), W [m, c / group, k, k], bias, residual, Relu.
struct WindowCase {
  int64_t n, c, h, w, m, k, stride, pad, group;
  bool residual;
  bool plain = false;  // X plain NCHW (plain_input = 1: stems)
};

std::string describe(const WindowCase& s) {
  return std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) +
         " -> " + std::to_string(s.m) + " k" + std::to_string(s.k) + " s" + std::to_string(s.stride) + " p" +
         std::to_string(s.pad) + " g" + std::to_string(s.group) + (s.residual ? " residual" : "") +
         (s.plain ? " plain" : "");
}

// NCHW values v [n, c, h * w] as a blocked tensor [n, ceil(c / 16), h, w, 16], zero past c.
Tensor blocked_tensor(const std::vector<float>& v, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t cb = channel_blocks(c), hw = h * w;
  Tensor t = Tensor::empty(DType::F32, Shape{n, cb, h, w, 16});
  float* d = t.data_as<float>();
  std::fill_n(d, t.numel(), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) d[((i * cb + ch / 16) * hw + p) * 16 + ch % 16] = v[(i * c + ch) * hw + p];
  return t;
}

TEST(BlockedConvBf16, WindowsMatchRoundedReference) {
  if (!(isa_enabled(Isa::Avx512) && cpu_features().avx512bf16)) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  const WindowCase cases[] = {
      {1, 8, 9, 13, 20, 3, 1, 1, 1, false},     // 3x3 over 8 channels (no Winograd): input-stationary rows
      {2, 37, 15, 13, 33, 3, 2, 1, 1, true},    // stride 2, odd channels (a pair across the block's zero lane)
      {1, 32, 12, 12, 48, 3, 1, 1, 1, true},    // Winograd-feasible, 9 tiles: direct in bfloat16
      {1, 300, 7, 7, 40, 3, 1, 1, 1, false},    // 300 channels: 19 input blocks, rows of 7
      {1, 24, 11, 10, 17, 5, 2, 2, 1, false},   // 5x5 stride 2: the general tile
      {1, 64, 9, 9, 64, 3, 1, 1, 2, true},      // two groups of whole blocks
      {1, 48, 10, 9, 48, 3, 2, 1, 6, false},    // groups of 8 channels (densified)
      {2, 64, 14, 14, 96, 1, 2, 0, 1, true},    // strided 1x1: subsampled pointwise
      {1, 45, 13, 11, 70, 1, 2, 0, 1, false},   // strided 1x1, odd sizes
      {1, 40, 15, 15, 36, 1, 3, 0, 1, false},   // stride 3
      {1, 3, 23, 21, 64, 7, 2, 3, 1, false, true},  // resnet's stem: 7x7/2 over an image
      {2, 3, 18, 25, 70, 7, 2, 3, 1, true, true},   // batch 2, a lone last output block, residual
      {1, 2, 16, 13, 40, 5, 2, 1, 1, false, true},  // 5x5/2 over 2 channels (50 products)
      {1, 3, 17, 17, 32, 4, 2, 2, 1, false, true},  // an even window: no half-zero slot
  };
  ThreadPool pool(2);
  uint32_t seed = 500;
  const KernelDef* def = KernelRegistry::global().find_by_id("x86/blockedconv_f32_avx512");
  ASSERT_NE(def, nullptr);
  for (const WindowCase& s : cases) {
    const int64_t oh = (s.h + 2 * s.pad - s.k) / s.stride + 1, ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
    const int64_t cg = s.c / s.group, mg = s.m / s.group;
    const std::vector<float> xv = random_floats(s.n * s.c * s.h * s.w, seed++);
    const std::vector<float> wv = random_floats(s.m * cg * s.k * s.k, seed++);
    const std::vector<float> bv = random_floats(s.m, seed++), zv = random_floats(s.n * s.m * oh * ow, seed++);
    Tensor x = blocked_tensor(xv, s.n, s.c, s.h, s.w);
    const Tensor z = blocked_tensor(zv, s.n, s.m, oh, ow);
    if (s.plain) {
      x = Tensor::empty(DType::F32, Shape{s.n, s.c, s.h, s.w});
      std::copy(xv.begin(), xv.end(), x.data_as<float>());
    }
    Tensor w = Tensor::empty(DType::F32, Shape{s.m, cg, s.k, s.k}), b = Tensor::empty(DType::F32, Shape{s.m});
    std::copy(wv.begin(), wv.end(), w.data_as<float>());
    std::copy(bv.begin(), bv.end(), b.data_as<float>());
    AttrMap attrs;
    attrs.set("strides", nn_test::attr_ints({s.stride, s.stride}));
    attrs.set("pads", nn_test::attr_ints({s.pad, s.pad, s.pad, s.pad}));
    attrs.set("group", nn_test::attr_int(s.group));
    attrs.set("activation", nn_test::attr_string("Relu"));
    if (s.plain) attrs.set("plain_input", nn_test::attr_int(1));
    const Shape y_shape{s.n, channel_blocks(s.m), oh, ow, 16};
    std::vector<DType> dtypes(s.residual ? 4 : 3, DType::F32);
    std::vector<const Tensor*> constants{nullptr, &w, &b};
    std::vector<Shape> shapes{x.shape(), w.shape(), b.shape()};
    std::vector<const Tensor*> ins{&x, &w, &b};
    if (s.residual) {
      constants.push_back(nullptr);
      shapes.push_back(z.shape());
      ins.push_back(&z);
    }
    auto kernel = make_kernel(*def, KernelInit{attrs, 1, dtypes, constants, shapes, Precision::Bf16});
    ASSERT_TRUE(kernel) << kernel.error().to_string();
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const std::string where = describe(s) + (p ? " 2 threads" : "");
      Tensor y = Tensor::empty(DType::F32, y_shape);
      std::fill_n(y.data_as<float>(), y.numel(), std::nanf(""));
      const std::vector<Tensor*> outs{&y};
      Scratch scratch;
      KernelContext ctx(attrs, 1, ins, outs, p, &scratch);
      const Status st = (*kernel)->run(ctx);
      ASSERT_TRUE(st.is_ok()) << where << ": " << st.to_string();
      const int64_t mb = channel_blocks(s.m), opos = oh * ow;
      double max_diff = 0.0;
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t o = 0; o < mb * 16; ++o)
          for (int64_t pos = 0; pos < opos; ++pos) {
            const float got = y.data_as<float>()[((i * mb + o / 16) * opos + pos) * 16 + o % 16];
            if (o >= s.m) {
              ASSERT_EQ(got, 0.0f) << where << ": padded lane " << o;
              continue;
            }
            const int64_t oy = pos / ow, ox = pos % ow, grp = o / mg;
            double want = bv[o], exact = bv[o], mag = 0.0;
            for (int64_t ch = 0; ch < cg; ++ch)
              for (int64_t ky = 0; ky < s.k; ++ky)
                for (int64_t kx = 0; kx < s.k; ++kx) {
                  const int64_t iy = oy * s.stride - s.pad + ky, ix = ox * s.stride - s.pad + kx;
                  if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                  const float xf = xv[((i * s.c + grp * cg + ch) * s.h + iy) * s.w + ix];
                  const float wf = wv[((o * cg + ch) * s.k + ky) * s.k + kx];
                  want += rounded(xf) * rounded(wf);
                  exact += static_cast<double>(xf) * wf;
                  mag += std::fabs(rounded(xf) * rounded(wf));
                }
            if (s.residual) {
              want += zv[(i * s.m + o) * opos + pos];
              exact += zv[(i * s.m + o) * opos + pos];
            }
            want = std::max(0.0, want);
            exact = std::max(0.0, exact);
            // float32 sums of exact bfloat16 products.
            ASSERT_NEAR(got, want, 1e-6 * (mag + 1.0)) << where << ": channel " << o << ", position " << pos;
            max_diff = std::max(max_diff, std::fabs(got - exact));
          }
      // bfloat16 ran: visibly coarser than float32.
      EXPECT_GT(max_diff, 1e-4) << where;
    }
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
