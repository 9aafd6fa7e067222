// SPDX-License-Identifier: Apache-2.0
// The bfloat16 pointwise convolution on the blocked channel layout
// (blocked_pointwise_avx512bf16, conv_blocked_avx512.cc) against a double-precision product
// of the bfloat16-rounded input and weights: channel counts off the 16-channel block and the
// 32-channel pair (odd ones too), position counts off the 12-position tile, sub-ranges of
// positions and pairs, bias, residual and Relu; padded output lanes are zero and nothing
// outside the computed range is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "core/half.h"
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

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
