// SPDX-License-Identifier: Apache-2.0
// Measured kernel choice through sessions: a measuring session times every candidate and
// writes the tuning cache; a session reading the cache runs the kernel and tactic it names
// (seen in the profile), each of which matches a direct double-precision convolution; stale,
// foreign and corrupt entries are ignored and the rules choose.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "ignis/session.h"
#include "kernels/nn_test_util.h"
#include "runtime/tuning_cache.h"
#include "testing/model_builder.h"
#include "testing/temp_dir.h"

namespace ignis {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

struct ConvCase {
  int64_t cin, cout, hw, k, stride;
};

// y = Conv(x, W, B), SAME_UPPER padding.
ModelBuilder conv_builder(const ConvCase& c) {
  ModelBuilder b;
  b.input("x", DType::F32, {1, c.cin, c.hw, c.hw}).output("y", DType::F32);
  b.initializer_f32("W", {c.cout, c.cin, c.k, c.k}, nn_test::random_floats(c.cout * c.cin * c.k * c.k, 3));
  b.initializer_f32("B", {c.cout}, nn_test::random_floats(c.cout, 4));
  b.node("Conv", {"x", "W", "B"}, {"y"}, "conv", {{"group", 1}});
  b.string_attr("auto_pad", "SAME_UPPER").ints_attr("strides", {c.stride, c.stride});
  return b;
}

// The direct definition, in double: SAME_UPPER puts the odd padding element at the end.
std::vector<double> conv_direct(const ConvCase& c, const std::vector<float>& x) {
  const std::vector<float> w = nn_test::random_floats(c.cout * c.cin * c.k * c.k, 3);
  const std::vector<float> bias = nn_test::random_floats(c.cout, 4);
  const int64_t out = (c.hw + c.stride - 1) / c.stride;
  const int64_t pad_total = std::max<int64_t>(0, (out - 1) * c.stride + c.k - c.hw);
  const int64_t pad = pad_total / 2;
  std::vector<double> y(static_cast<size_t>(c.cout * out * out));
  for (int64_t m = 0; m < c.cout; ++m)
    for (int64_t oy = 0; oy < out; ++oy)
      for (int64_t ox = 0; ox < out; ++ox) {
        double s = bias[m];
        for (int64_t ci = 0; ci < c.cin; ++ci)
          for (int64_t ky = 0; ky < c.k; ++ky)
            for (int64_t kx = 0; kx < c.k; ++kx) {
              const int64_t iy = oy * c.stride + ky - pad, ix = ox * c.stride + kx - pad;
              if (iy < 0 || ix < 0 || iy >= c.hw || ix >= c.hw) continue;
              s += static_cast<double>(w[((m * c.cin + ci) * c.k + ky) * c.k + kx]) * x[(ci * c.hw + iy) * c.hw + ix];
            }
        y[(m * out + oy) * out + ox] = s;
      }
  return y;
}

Result<Session> open(const std::string& bytes, Tuning tuning, const std::string& cache,
                     std::vector<TunedNode>* tuned = nullptr) {
  SessionOptions o;
  o.threads = 2;
  o.tuning = tuning;
  o.tuning_cache = cache;
  if (tuned) o.on_tuned = [tuned](const TunedNode& n) { tuned->push_back(n); };
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), o);
}

// Runs once with profiling; returns the output and the conv's kernel label.
std::pair<Tensor, std::string> run_conv(const Session& s, const Tensor& x) {
  std::vector<OpTiming> t;
  auto out = s.run_profiled({{"x", x}}, &t);
  EXPECT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(t.size(), 1u);
  return {out ? (*out)[0] : Tensor(), t.empty() ? "" : t[0].kernel};
}

void expect_close(const Tensor& y, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(y.numel(), static_cast<int64_t>(want.size())) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (int64_t i = 0; i < y.numel(); ++i)
    ASSERT_NEAR(y.data_as<float>()[i], want[i], 1e-4 * scale + 1e-5) << what << " at " << i;
}

void write_entry(const std::string& path, const std::string& cpu, const std::string& key, const std::string& kernel,
                 const std::string& tactic) {
  std::ofstream out(path, std::ios::trunc);
  out << cpu << "\t2\t" << key << "\t" << kernel << "\t" << tactic << "\t1.0\n";
}

// Kernel labels are "id" or "id:tactic"; the candidate list marks the rules' choice.
std::pair<std::string, std::string> split_label(const std::string& label) {
  const size_t colon = label.find(':');
  return colon == std::string::npos ? std::pair{label, std::string()}
                                    : std::pair{label.substr(0, colon), label.substr(colon + 1)};
}

// A one-convolution model, an input for it and the direct convolution's output.
struct ConvRun {
  std::string bytes;
  Tensor x;
  std::vector<double> want;
};

ConvRun conv_run(const ConvCase& c) {
  ConvRun r{conv_builder(c).bytes(), Tensor::empty(DType::F32, {1, c.cin, c.hw, c.hw}), {}};
  const std::vector<float> xv = nn_test::random_floats(r.x.numel(), 9);
  std::copy(xv.begin(), xv.end(), r.x.data_as<float>());
  r.want = conv_direct(c, xv);
  return r;
}

const ConvCase kCases[] = {
    {16, 24, 20, 3, 1},  // Winograd F(4x4) by the rules
    {32, 32, 9, 3, 1},   // few tiles: F(2x2) or GEMM
    {24, 40, 14, 1, 1},  // pointwise: GEMM or transposed
    {16, 16, 13, 3, 2},  // strided: GEMM or transposed
};

TEST(Tuning, EveryCandidateTheCacheNamesRunsAndMatchesTheDirectConvolution) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "cin " << c.cin << " cout " << c.cout << " hw " << c.hw << " k " << c.k
                                    << " stride " << c.stride);
    TempDir dir("ignis_tuning_candidates");
    const std::string cache = (dir.path() / "tuning.tsv").string();
    const auto [bytes, x, want] = conv_run(c);

    std::vector<TunedNode> tuned;
    auto measured = open(bytes, Tuning::Measure, cache, &tuned);
    ASSERT_TRUE(measured) << measured.error().to_string();
    if (tuned.empty()) GTEST_SKIP() << "one kernel can run this convolution here: nothing to choose";
    ASSERT_EQ(tuned.size(), 1u);
    ASSERT_GE(tuned[0].candidates.size(), 2u);
    const auto [y_measured, label_measured] = run_conv(*measured, x);
    EXPECT_EQ(label_measured, tuned[0].chosen);
    expect_close(y_measured, want, "measured choice " + label_measured);

    // The measuring session wrote its choice; a cached session finds it without measuring.
    std::vector<TunedNode> again;
    auto cached = open(bytes, Tuning::Cached, cache, &again);
    ASSERT_TRUE(cached);
    EXPECT_TRUE(again.empty());
    EXPECT_EQ(run_conv(*cached, x).second, tuned[0].chosen);

    // Force each candidate through the cache file.
    for (const auto& [label, us] : tuned[0].candidates) {
      if (label.find(" (rules)") != std::string::npos) continue;
      const auto [kernel, tactic] = split_label(label);
      write_entry(cache, cpu_features().identity(), tuned[0].signature, kernel, tactic);
      auto forced = open(bytes, Tuning::Cached, cache);
      ASSERT_TRUE(forced) << forced.error().to_string();
      const auto [y, ran] = run_conv(*forced, x);
      EXPECT_EQ(ran, label);
      expect_close(y, want, "candidate " + label);
    }
  }
}

TEST(Tuning, StaleForeignAndCorruptEntriesFallBackToTheRules) {
  const ConvCase c = kCases[0];
  TempDir dir("ignis_tuning_stale");
  const std::string cache = (dir.path() / "tuning.tsv").string();
  const auto [bytes, x, want] = conv_run(c);

  auto rules = open(bytes, Tuning::Off, "");
  ASSERT_TRUE(rules);
  const std::string rules_label = run_conv(*rules, x).second;
  std::vector<TunedNode> tuned;
  auto measured = open(bytes, Tuning::Measure, cache, &tuned);
  ASSERT_TRUE(measured);
  if (tuned.empty()) GTEST_SKIP() << "one kernel can run this convolution here: nothing to choose";
  const std::string key = tuned[0].signature;
  // A candidate other than the rules' own, so that following the entry would show.
  std::string other;
  for (const auto& [label, us] : tuned[0].candidates)
    if (label.find(" (rules)") == std::string::npos && label != rules_label) other = label;
  ASSERT_FALSE(other.empty());
  const auto [kernel, tactic] = split_label(other);

  struct Bad {
    const char* why;
    std::string cpu, key, kernel, tactic;
  };
  const Bad bad[] = {
      {"unknown kernel", cpu_features().identity(), key, "x86/no_such_kernel", tactic},
      {"unknown tactic", cpu_features().identity(), key, kernel, "no_such_tactic"},
      {"another cpu", "Some Other CPU | GenuineIntel family 6 model 1 | avx2", key, kernel, tactic},
      {"another signature", cpu_features().identity(), key + " x", kernel, tactic},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.why);
    write_entry(cache, b.cpu, b.key, b.kernel, b.tactic);
    auto s = open(bytes, Tuning::Cached, cache);
    ASSERT_TRUE(s) << s.error().to_string();
    const auto [y, ran] = run_conv(*s, x);
    EXPECT_EQ(ran, rules_label);
    expect_close(y, want, b.why);
  }
  // Following the good entry proves the bad ones were refused, not the file ignored.
  write_entry(cache, cpu_features().identity(), key, kernel, tactic);
  auto good = open(bytes, Tuning::Cached, cache);
  ASSERT_TRUE(good);
  EXPECT_EQ(run_conv(*good, x).second, other);
  // Tuning off ignores the cache.
  auto off = open(bytes, Tuning::Off, cache);
  ASSERT_TRUE(off);
  EXPECT_EQ(run_conv(*off, x).second, rules_label);

  {
    std::ofstream out(cache, std::ios::trunc | std::ios::binary);
    out << "\x7f" << "ELF not a cache\n\t\t\t\n" << std::string(300, '\xff') << "\n";
  }
  auto corrupt = open(bytes, Tuning::Cached, cache);
  ASSERT_TRUE(corrupt) << corrupt.error().to_string();
  const auto [y, ran] = run_conv(*corrupt, x);
  EXPECT_EQ(ran, rules_label);
  expect_close(y, want, "corrupt file");
}

TEST(Tuning, PlanDimsChooseTheShapesPlannedAtCreation) {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, 3}, {"batch"}).output("y", DType::F32);
  b.node("Relu", {"x"}, {"y"});
  const std::string bytes = b.bytes();
  SessionOptions o;
  o.plan_batch = 6;
  auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), o);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cached_plans(), 1u);
  // Batch 6 was planned at creation: running it plans nothing new.
  auto out = s->run({{"x", Tensor::zeros(DType::F32, {6, 3})}});
  ASSERT_TRUE(out);
  EXPECT_EQ(s->cached_plans(), 1u);
  EXPECT_EQ(s->model_info().flops >= 0, true);

  o.plan_batch = 0;
  o.plan_at_open = false;
  auto lazy = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), o);
  ASSERT_TRUE(lazy);
  EXPECT_EQ(lazy->cached_plans(), 0u);
  ASSERT_TRUE(lazy->run({{"x", Tensor::zeros(DType::F32, {4, 3})}}));
  EXPECT_EQ(lazy->cached_plans(), 1u);
}

}  // namespace
}  // namespace ignis
