// SPDX-License-Identifier: Apache-2.0
// fuse_leaky_relu: Max(x, a * x) with 0 < a < 1 -> LeakyRelu(x, alpha = a), bit for bit, and
// the forms that are not LeakyRelu stay.
#include <cstring>
#include <limits>

#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

// Max(x, x * a) with the operand orders `max_x_first` and `mul_x_first`.
GraphBuilder leaky(float a, bool max_x_first = true, bool mul_x_first = true) {
  GraphBuilder b;
  b.input("x", {-1, 6}, {"n", ""}).scalar("a", a);
  if (mul_x_first) b.node("Mul", {"x", "a"}, {"m"});
  else b.node("Mul", {"a", "x"}, {"m"});
  if (max_x_first) b.node("Max", {"x", "m"}, {"y"});
  else b.node("Max", {"m", "x"}, {"y"});
  return b.output("y");
}

ir::Graph fused(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::fuse_leaky_relu, b.graph(), rewrites);
}

NamedTensors inputs_with_specials() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> v = random_values(36, 7, -3.0f, 3.0f);
  for (float s : {0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), -1e-45f}) v.push_back(s);
  Tensor t = Tensor::empty(DType::F32, Shape{7, 6});
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return {{"x", t}};
}

TEST(FuseLeakyRelu, FusesEveryOperandOrderBitForBit) {
  for (bool max_x_first : {true, false}) {
    for (bool mul_x_first : {true, false}) {
      const GraphBuilder b = leaky(0.2f, max_x_first, mul_x_first);
      int n = 0;
      const ir::Graph g = fused(b, &n);
      EXPECT_EQ(n, 1);
      ASSERT_EQ(g.nodes.size(), 1u);
      EXPECT_EQ(g.nodes[0].op_type, "LeakyRelu");
      EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
      EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
      EXPECT_EQ(g.nodes[0].attrs.get_float("alpha", 0.0f), 0.2f);
      const NamedTensors feeds = inputs_with_specials();
      auto want = reference_runner::run(b.graph(), feeds);
      auto got = reference_runner::run(g, feeds);
      ASSERT_TRUE(want && got);
      const Tensor &p = (*want)[0], &q = (*got)[0];
      for (int64_t i = 0; i < p.numel(); ++i) {
        const float u = p.data_as<float>()[i], w = q.data_as<float>()[i];
        if (std::isnan(u)) EXPECT_TRUE(std::isnan(w)) << i;
        else EXPECT_EQ(std::memcmp(&u, &w, sizeof(float)), 0) << i << ": " << u << " vs " << w;
      }
      EXPECT_EQ(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{9, 6}}, 2)), 0.0);
    }
  }
}

TEST(FuseLeakyRelu, KeepsAProductOthersRead) {
  GraphBuilder b = leaky(0.1f);
  b.node("Neg", {"m"}, {"z"}).output("z");
  const ir::Graph g = fused(b);
  EXPECT_EQ(count_ops(g, "LeakyRelu"), 1);
  EXPECT_EQ(count_ops(g, "Mul"), 1);
  EXPECT_EQ(reference_runner::max_difference(b.graph(), g, random_inputs(b.graph(), {{4, 6}}, 3)), 0.0);
}

TEST(FuseLeakyRelu, LeavesOtherMaximaAlone) {
  const auto expect_untouched = [](const GraphBuilder& b, const std::string& what) {
    int n = -1;
    fused(b, &n);
    EXPECT_EQ(n, 0) << what;
  };
  for (float a : {1.0f, 1.5f, 0.0f, -0.2f}) expect_untouched(leaky(a), "slope " + std::to_string(a));
  {
    GraphBuilder b;  // the product is of another value
    b.input("x", {4, 6}).input("w", {4, 6}).scalar("a", 0.2f);
    b.node("Mul", {"w", "a"}, {"m"}).node("Max", {"x", "m"}, {"y"}).output("y");
    expect_untouched(b, "other value");
  }
  {
    GraphBuilder b;  // a run-time slope
    b.input("x", {4, 6}).input("a", {});
    b.node("Mul", {"x", "a"}, {"m"}).node("Max", {"x", "m"}, {"y"}).output("y");
    expect_untouched(b, "dynamic slope");
  }
  {
    GraphBuilder b;  // a per-column slope
    b.input("x", {4, 6}).weight("a", Shape{6}, 1, 0.1f, 0.5f);
    b.node("Mul", {"x", "a"}, {"m"}).node("Max", {"x", "m"}, {"y"}).output("y");
    expect_untouched(b, "per-column slope");
  }
  {
    GraphBuilder b;  // three operands
    b.input("x", {4, 6}).scalar("a", 0.2f);
    b.node("Mul", {"x", "a"}, {"m"}).node("Max", {"x", "m", "x"}, {"y"}).output("y");
    expect_untouched(b, "variadic Max");
  }
}

TEST(FuseLeakyRelu, LetsAConvTakeTheActivation) {
  GraphBuilder b;
  b.input("x", {1, 3, 6, 6}).weight("w", Shape{4, 3, 3, 3}, 1).scalar("a", 0.2f);
  b.node("Conv", {"x", "w"}, {"c"}).node("Mul", {"c", "a"}, {"m"}).node("Max", {"c", "m"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(g.nodes[0].attrs.get_string("activation", ""), "LeakyRelu");
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{1, 3, 6, 6}}, 5)), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test
