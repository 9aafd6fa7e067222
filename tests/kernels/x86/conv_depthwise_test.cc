// SPDX-License-Identifier: Apache-2.0
// The AVX-512 direct depthwise kernel (conv_depthwise_avx512.cc) called directly on one plane
// with guard regions after its output and its scratch (sized by
// conv_f32_depthwise_avx512_scratch), and with the residual aliasing the output (in-place
// FusedConv), which must give the result of separate buffers; the same for its channels-in-lanes
// path, by units of 16 channels, and the AVX2 channels-in-lanes path by units of 8 (these also
// against a direct loop). Their results against the reference
// kernel are checked registry-wide by the cases in tests/kernels/cases/conv_depthwise.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/strings.h"
#include "kernels/cases/cases.h"
#include "kernels/nn_test_util.h"
#include "kernels/registry.h"
#include "kernels/x86/conv_depthwise_avx512.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

constexpr size_t kGuard = 64;
constexpr uint32_t kGuardBits = 0x7fc0dead;  // a NaN no kernel produces

std::vector<float> guarded(size_t n, uint32_t seed) {
  std::vector<float> v = nn_test::random_floats(static_cast<int64_t>(n), seed);
  float g;
  std::memcpy(&g, &kGuardBits, sizeof(g));
  v.resize(n + kGuard, g);
  return v;
}

bool guard_intact(const std::vector<float>& v, size_t n) {
  for (size_t i = n; i < n + kGuard; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], sizeof(bits));
    if (bits != kGuardBits) return false;
  }
  return true;
}

// One plane's window: input extents, kernel, strides, pads (top, left, bottom, right).
struct Window {
  int64_t ih, iw, kh, kw, sh, sw, pt, pl, pb, pr;

  ConvGeometry2d geometry() const {
    ConvGeometry2d g;
    g.ih = ih;
    g.iw = iw;
    g.kh = kh;
    g.kw = kw;
    g.sh = sh;
    g.sw = sw;
    g.ph = pt;
    g.pw = pl;
    g.oh = (ih + pt + pb - kh) / sh + 1;
    g.ow = (iw + pl + pr - kw) / sw + 1;
    return g;
  }
};

// Clip(-0.5, 0.75): an activation that changes values on both sides.
GemmEpilogue clip_epilogue() {
  GemmEpilogue e;
  e.act = Activation::Clip;
  e.act_lo = -0.5f;
  e.act_hi = 0.75f;
  return e;
}

TEST(ConvDepthwiseAvx512, StaysInBoundsAndAcceptsResidualAliasingOutput) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  const Window geos[] = {{1, 1, 3, 3, 1, 1, 1, 1, 1, 1},     {2, 3, 5, 5, 2, 2, 2, 2, 2, 2},
                      {7, 7, 3, 3, 1, 1, 1, 1, 1, 1},     {14, 14, 5, 5, 2, 2, 2, 2, 2, 2},
                      {17, 33, 3, 3, 2, 2, 0, 0, 1, 1},   {113, 113, 3, 3, 1, 1, 1, 1, 1, 1},
                      {9, 40, 7, 7, 1, 2, 3, 3, 3, 3},    {30, 5, 3, 5, 2, 1, 0, 2, 2, 0},
                      {1, 100, 1, 3, 1, 2, 0, 1, 0, 1}};
  const GemmEpilogue act = clip_epilogue();
  for (const Window& q : geos) {
    const ConvGeometry2d g = q.geometry();
    ASSERT_TRUE(conv_f32_depthwise_supported(g));
    const std::string where = str_cat("input ", q.ih, "x", q.iw, " kernel ", q.kh, "x", q.kw, " strides ", q.sh, ",",
                                      q.sw, " output ", g.oh, "x", g.ow);
    const size_t in = static_cast<size_t>(g.ih * g.iw), out = static_cast<size_t>(g.oh * g.ow);
    const std::vector<float> x = nn_test::random_floats(static_cast<int64_t>(in), 1);
    const std::vector<float> w = nn_test::random_floats(q.kh * q.kw, 2);
    const std::vector<float> z = nn_test::random_floats(static_cast<int64_t>(out), 3);
    const size_t scratch_floats = conv_f32_depthwise_avx512_scratch(g);
    ASSERT_EQ(scratch_floats % 16, 0u) << where;
    std::vector<float> scratch = guarded(scratch_floats, 4);
    std::vector<float> y = guarded(out, 5);
    const float bias = 0.25f;
    DepthwisePlanes planes{.x = x.data(), .w = w.data(), .bias = &bias, .residual = z.data(), .y = y.data(), .c = 1,
                           .m = 1, .mg = 1, .act = &act};
    conv_f32_depthwise_planes_avx512(g, planes, 0, 1, scratch.data());
    EXPECT_TRUE(guard_intact(scratch, scratch_floats)) << where << ": scratch written past its end";
    EXPECT_TRUE(guard_intact(y, out)) << where << ": output written past its end";
    // In place: the residual is read from the output buffer.
    std::vector<float> y2 = guarded(out, 6);
    std::copy(z.begin(), z.end(), y2.begin());
    planes.residual = planes.y = y2.data();
    conv_f32_depthwise_planes_avx512(g, planes, 0, 1, scratch.data());
    for (size_t i = 0; i < out; ++i) ASSERT_EQ(y[i], y2[i]) << where << ": element " << i;
    EXPECT_TRUE(guard_intact(y2, out)) << where;
  }
}

// One channels-in-lanes implementation: its ISA, channels per unit and entry points.
struct LanesPath {
  const char* name;
  Isa isa;
  int64_t width;
  bool (*takes)(const ConvGeometry2d&);
  size_t (*scratch)(const ConvGeometry2d&);
  void (*run)(const ConvGeometry2d&, const DepthwisePlanes&, int64_t, int64_t, float*);
};

// A channels-in-lanes path in units of `width` channels: partial units, several images and
// channel multipliers; called on all units at once, and in place one unit at a time (last
// first, each with a fresh scratch), which must agree.
void check_lanes_path(const LanesPath& path) {
  struct Geo {
    int64_t n, c, mg;
    Window win;
  };
  const Geo geos[] = {{1, 1, 1, {1, 1, 3, 3, 1, 1, 1, 1, 1, 1}},   {1, 17, 1, {7, 7, 3, 3, 1, 1, 1, 1, 1, 1}},
                      {2, 33, 1, {5, 6, 5, 5, 2, 2, 1, 2, 2, 1}},   {2, 9, 2, {9, 4, 3, 3, 2, 1, 0, 1, 1, 0}},
                      {1, 16, 1, {15, 15, 5, 5, 1, 1, 2, 2, 2, 2}}, {1, 3, 1, {1, 40, 1, 3, 1, 2, 0, 1, 0, 1}},
                      {1, 13, 1, {11, 9, 7, 7, 2, 2, 3, 3, 3, 3}}};
  const GemmEpilogue act = clip_epilogue();
  for (const Geo& geo : geos) {
    const Window& q = geo.win;
    const ConvGeometry2d g = q.geometry();
    ASSERT_TRUE(conv_f32_depthwise_supported(g));
    ASSERT_TRUE(path.takes(g));
    const int64_t m = geo.c * geo.mg, units = geo.n * ((m + path.width - 1) / path.width);
    const std::string where = str_cat(path.name, " ", geo.n, "x", geo.c, "x", geo.mg, " input ", q.ih, "x", q.iw,
                                      " kernel ", q.kh, "x", q.kw, " strides ", q.sh, ",", q.sw, " output ", g.oh, "x",
                                      g.ow);
    const size_t in = static_cast<size_t>(geo.n * geo.c * g.ih * g.iw), out = static_cast<size_t>(geo.n * m * g.oh * g.ow);
    const std::vector<float> x = nn_test::random_floats(static_cast<int64_t>(in), 1);
    const std::vector<float> w = nn_test::random_floats(m * q.kh * q.kw, 2);
    const std::vector<float> bias = nn_test::random_floats(m, 7);
    const std::vector<float> z = nn_test::random_floats(static_cast<int64_t>(out), 3);
    const size_t scratch_floats = path.scratch(g);
    ASSERT_EQ(scratch_floats % static_cast<size_t>(path.width), 0u) << where;
    std::vector<float> scratch = guarded(scratch_floats, 4);
    std::vector<float> y = guarded(out, 5);
    DepthwisePlanes planes{.x = x.data(), .w = w.data(), .bias = bias.data(), .residual = z.data(), .y = y.data(),
                           .c = geo.c, .m = m, .mg = geo.mg, .act = &act};
    path.run(g, planes, 0, units, scratch.data());
    EXPECT_TRUE(guard_intact(scratch, scratch_floats)) << where << ": scratch written past its end";
    EXPECT_TRUE(guard_intact(y, out)) << where << ": output written past its end";
    // In place, one unit at a time from a fresh scratch: the same result.
    std::vector<float> y2 = guarded(out, 6);
    std::copy(z.begin(), z.end(), y2.begin());
    planes.residual = planes.y = y2.data();
    for (int64_t u = units - 1; u >= 0; --u) {
      std::vector<float> fresh = guarded(scratch_floats, static_cast<uint32_t>(8 + u));
      path.run(g, planes, u, u + 1, fresh.data());
    }
    for (size_t i = 0; i < out; ++i) ASSERT_EQ(y[i], y2[i]) << where << ": element " << i;
    EXPECT_TRUE(guard_intact(y2, out)) << where;
    // Against a direct loop over each output (float32, summed in another order: tolerance).
    for (int64_t t = 0; t < geo.n * m; ++t) {
      const int64_t image = t / m, o = t % m;
      const float* xp = x.data() + (image * geo.c + o / geo.mg) * g.ih * g.iw;
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          double sum = bias[static_cast<size_t>(o)];
          for (int64_t ky = 0; ky < q.kh; ++ky)
            for (int64_t kx = 0; kx < q.kw; ++kx) {
              const int64_t iy = oy * q.sh + ky - q.pt, ix = ox * q.sw + kx - q.pl;
              if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) continue;
              sum += double(w[static_cast<size_t>((o * q.kh + ky) * q.kw + kx)]) * xp[iy * g.iw + ix];
            }
          const size_t at = static_cast<size_t>((t * g.oh + oy) * g.ow + ox);
          const double want = std::clamp(sum + z[at], double(act.act_lo), double(act.act_hi));
          ASSERT_NEAR(y[at], want, 1e-5) << where << ": plane " << t << " at " << oy << "," << ox;
        }
    }
  }
}

TEST(ConvDepthwiseAvx512, LanesStayInBoundsAndAcceptResidualAliasingOutput) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  check_lanes_path({"avx512", Isa::Avx512, 16, conv_f32_depthwise_avx512_lanes, conv_f32_depthwise_avx512_lanes_scratch,
                    conv_f32_depthwise_lanes_avx512});
}

TEST(ConvDepthwiseAvx2, LanesStayInBoundsAndAcceptResidualAliasingOutput) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  check_lanes_path({"avx2", Isa::Avx2, 8, conv_f32_depthwise_avx2_lanes, conv_f32_depthwise_avx2_lanes_scratch,
                    conv_f32_depthwise_lanes_avx2});
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif
