// SPDX-License-Identifier: Apache-2.0
// Precision of the Winograd F(4x4, 3x3) convolution (src/kernels/x86/conv_winograd.h), with the
// AVX-512 and the AVX2 transforms, on
// ResNet-like data against a double-precision direct convolution: N(0, 1) inputs, He-scaled
// N(0, 2 / (9 cin)) weights, input depth up to 512. The max error must stay within 3e-5 of
// the largest output (measured: up to 1.1e-5, see conv_winograd_f4x4_avx512.cc), and every element must also
// pass the model parity tolerance |a - b| <= 1e-4 + 1e-3 |b| of tests/models/test_parity.py.
// Also: two and four threads (tiles split, or one block shared by stages) give identical
// results. Shapes, padding, epilogues and two threads are covered by the registry-wide consistency test
// (tests/kernels/cases/conv_winograd.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/x86/conv_winograd.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

std::vector<float> normal_floats(size_t n, double stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist(0.0, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(dist(rng));
  return v;
}

// y[o][oy][ox] = sum_{c, ky, kx} w[o][c][ky][kx] x[c][oy + ky - ph][ox + kx - pw], in double.
std::vector<double> direct_conv(const ConvGeometry2d& g, int64_t cin, int64_t cout, const std::vector<float>& x,
                                const std::vector<float>& w) {
  std::vector<double> y(static_cast<size_t>(cout * g.oh * g.ow), 0.0);
  for (int64_t o = 0; o < cout; ++o)
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t ky = 0; ky < 3; ++ky)
        for (int64_t kx = 0; kx < 3; ++kx) {
          const double wv = w[static_cast<size_t>(((o * cin + c) * 3 + ky) * 3 + kx)];
          for (int64_t oy = 0; oy < g.oh; ++oy) {
            const int64_t iy = oy + ky - g.ph;
            if (iy < 0 || iy >= g.ih) continue;
            for (int64_t ox = 0; ox < g.ow; ++ox) {
              const int64_t ix = ox + kx - g.pw;
              if (ix < 0 || ix >= g.iw) continue;
              y[static_cast<size_t>((o * g.oh + oy) * g.ow + ox)] +=
                  wv * x[static_cast<size_t>((c * g.ih + iy) * g.iw + ix)];
            }
          }
        }
  return y;
}

// F(2x2) counts the tiles of the whole batch: resnet50's 7x7 stage (16 tiles an image) takes
// it from batch 2, and still not where F(4x4) takes the image on its own.
TEST(ConvWinograd, TwoByTwoCountsTheTilesOfTheWholeBatch) {
  auto same_3x3 = [](int64_t hw) {
    return ConvGeometry2d{.ih = hw, .iw = hw, .oh = hw, .ow = hw, .kh = 3, .kw = 3, .ph = 1, .pw = 1};
  };
  const ConvGeometry2d seven = same_3x3(7), fourteen = same_3x3(14), fifty_six = same_3x3(56);
  EXPECT_FALSE(conv_winograd2_supported(seven, 512, 512, 1, 1));   // 16 tiles
  EXPECT_TRUE(conv_winograd2_supported(seven, 512, 512, 1, 2));    // 32
  EXPECT_TRUE(conv_winograd2_supported(seven, 512, 512, 1, 8));    // 128
  EXPECT_FALSE(conv_winograd2_supported(seven, 512, 512, 1, 0));   // batch unknown: one image
  EXPECT_TRUE(conv_winograd2_supported(fourteen, 256, 256, 1, 1));  // 49
  EXPECT_FALSE(conv_winograd2_supported(fifty_six, 64, 64, 1, 8));  // F(4x4)'s, at any batch
  EXPECT_FALSE(conv_winograd2_supported(seven, 512, 512, 2, 8));   // grouped
  // F(4x4) keeps its per-image bound.
  EXPECT_FALSE(conv_winograd_supported(fourteen, 256, 256, 1));
  EXPECT_TRUE(conv_winograd_supported(fifty_six, 64, 64, 1));
  // With AVX2 transforms F(4x4) takes 14x14 images too (no F(2x2) there), not 7x7.
  EXPECT_TRUE(conv_winograd_supported(fourteen, 256, 256, 1, kConvWinogradMinTilesAvx2));
  EXPECT_FALSE(conv_winograd_supported(seven, 256, 256, 1, kConvWinogradMinTilesAvx2));
}

void check_error_on_resnet_like_data(const GemmBackend& backend) {
  ThreadPool pool(2), pool4(4);
  for (int64_t cin : {64, 256, 512}) {
    const int64_t cout = 32, h = 28, w = 28;
    ConvGeometry2d g;
    g.ih = g.oh = h;
    g.iw = g.ow = w;
    g.kh = g.kw = 3;
    g.ph = g.pw = 1;
    const std::vector<float> x = normal_floats(static_cast<size_t>(cin * h * w), 1.0, 1);
    const std::vector<float> wt =
        normal_floats(static_cast<size_t>(cout * cin * 9), std::sqrt(2.0 / (9.0 * static_cast<double>(cin))), 2);
    const ConvWinograd conv = ConvWinograd::create(wt.data(), cout, cin, backend);
    std::vector<float> y(static_cast<size_t>(cout * h * w));
    std::unique_ptr<float, void (*)(void*)> scratch(
        static_cast<float*>(aligned_malloc(conv.scratch_floats(g, 1, pool.threads()) * sizeof(float))), aligned_free);
    conv.run(g, 1, x.data(), nullptr, nullptr, GemmEpilogue{}, y.data(), &pool, scratch.get());
    // Four threads on 49 tiles share one block, splitting its stages (two threads split tiles).
    std::vector<float> y4(y.size());
    std::unique_ptr<float, void (*)(void*)> scratch4(
        static_cast<float*>(aligned_malloc(conv.scratch_floats(g, 1, pool4.threads()) * sizeof(float))), aligned_free);
    conv.run(g, 1, x.data(), nullptr, nullptr, GemmEpilogue{}, y4.data(), &pool4, scratch4.get());
    EXPECT_EQ(y4, y) << "cin " << cin << ": the thread split changed the result";
    const std::vector<double> ref = direct_conv(g, cin, cout, x, wt);
    double max_ref = 0, max_err = 0;
    int parity_failures = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const double err = std::fabs(y[i] - ref[i]);
      max_ref = std::max(max_ref, std::fabs(ref[i]));
      max_err = std::max(max_err, err);
      if (err > 1e-4 + 1e-3 * std::fabs(ref[i])) ++parity_failures;
    }
    const double rel = max_err / max_ref;
    testing::Test::RecordProperty(std::string(backend.name) + "_cin" + std::to_string(cin) + "_max_err_over_max_ref",
                                  std::to_string(rel));
    std::printf("%s cin %ld: max |winograd - direct| %.3g, max |direct| %.3g, ratio %.3g\n",
                std::string(backend.name).c_str(), static_cast<long>(cin), max_err, max_ref, rel);
    EXPECT_LE(rel, 3e-5) << backend.name << " cin " << cin;
    EXPECT_EQ(parity_failures, 0) << backend.name << " cin " << cin;
  }
}

TEST(ConvWinograd, ErrorOnResNetLikeDataIsWithinTheStatedBound) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  check_error_on_resnet_like_data(gemm_backend_avx512());
}

TEST(ConvWinograd, Avx2ErrorOnResNetLikeDataIsWithinTheStatedBound) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  check_error_on_resnet_like_data(gemm_backend_avx2());
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif
