// SPDX-License-Identifier: Apache-2.0
// reduce_strength: Pow by 1, 2, 3, -1 and Div by a power of two become Identity, Mul and
// Reciprocal with the reference kernels' values (bit for bit except x^3), and nothing else
// is touched.
#include <cstring>
#include <limits>

#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

GraphBuilder pow_graph(float exponent, int64_t opset = 17) {
  GraphBuilder b(opset);
  b.input("x", {-1, 5}, {"n", ""}).scalar("e", exponent);
  b.node("Pow", {"x", "e"}, {"y"}).node("Neg", {"y"}, {"z"});
  return b.output("z");
}

ir::Graph reduced(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::reduce_strength, b.graph(), rewrites);
}

// x = [-2, 2] uniform values and the special values, in a [n, 5] tensor.
NamedTensors inputs_with_specials() {
  std::vector<float> v = random_values(40, 3, -2.0f, 2.0f);
  for (float s : {0.0f, -0.0f, kInf, -kInf, kNaN, 1e-30f, -1e-30f, 3e38f, -3e38f, 1e-40f}) v.push_back(s);
  Tensor t = Tensor::empty(DType::F32, Shape{10, 5});
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return {{"x", t}};
}

// Both graphs through the reference kernels: NaN where the other has NaN, else equal bits.
void expect_same_bits(const ir::Graph& a, const ir::Graph& b, const NamedTensors& feeds) {
  auto x = reference_runner::run(a, feeds);
  auto y = reference_runner::run(b, feeds);
  ASSERT_TRUE(x) << x.error().to_string();
  ASSERT_TRUE(y) << y.error().to_string();
  const Tensor &p = (*x)[0], &q = (*y)[0];
  ASSERT_EQ(p.shape(), q.shape());
  for (int64_t i = 0; i < p.numel(); ++i) {
    const float u = p.data_as<float>()[i], w = q.data_as<float>()[i];
    if (std::isnan(u) || std::isnan(w)) EXPECT_TRUE(std::isnan(u) && std::isnan(w)) << "element " << i;
    else EXPECT_EQ(std::memcmp(&u, &w, sizeof(float)), 0) << "element " << i << ": " << u << " vs " << w;
  }
}

TEST(ReduceStrength, ReplacesPowByExactOps) {
  const std::pair<float, const char*> cases[] = {{1.0f, "Identity"}, {2.0f, "Mul"}, {-1.0f, "Reciprocal"}};
  for (const auto& [e, op] : cases) {
    const GraphBuilder b = pow_graph(e);
    int n = 0;
    const ir::Graph g = reduced(b, &n);
    EXPECT_EQ(n, 1) << e;
    EXPECT_EQ(count_ops(g, "Pow"), 0) << e;
    EXPECT_EQ(count_ops(g, op), 1) << e;
    expect_same_bits(b.graph(), g, inputs_with_specials());
  }
}

TEST(ReduceStrength, ReplacesTheCubeByTwoProducts) {
  const GraphBuilder b = pow_graph(3.0f);
  const ir::Graph g = reduced(b);
  EXPECT_EQ(count_ops(g, "Pow"), 0);
  EXPECT_EQ(count_ops(g, "Mul"), 2);
  // Two float roundings against one: within a few ulp of values up to 8 in magnitude.
  const NamedTensors feeds = random_inputs(b.graph(), {{7, 5}}, 4);
  EXPECT_LE(reference_runner::max_difference(b.graph(), g, feeds), 8.0 * 2.4e-7);
  EXPECT_LE(optimized_vs_plain(b.graph(), feeds), 8.0 * 2.4e-7);
}

TEST(ReduceStrength, AcceptsIntegerAndDoubleExponents) {
  GraphBuilder b;
  b.input("x", {3, 5}).int_scalar("e", 2);
  b.node("Pow", {"x", "e"}, {"y"}).output("y");
  const ir::Graph g = reduced(b);
  EXPECT_EQ(count_ops(g, "Mul"), 1);
  expect_same_bits(b.graph(), g, random_inputs(b.graph(), {{3, 5}}, 5));
}

TEST(ReduceStrength, ReplacesDivisionByAPowerOfTwo) {
  for (float c : {2.0f, 0.25f, -8.0f, 1024.0f}) {
    GraphBuilder b;
    b.input("x", {10, 5}).scalar("c", c);
    b.node("Div", {"x", "c"}, {"y"}).output("y");
    int n = 0;
    const ir::Graph g = reduced(b, &n);
    EXPECT_EQ(n, 1) << c;
    EXPECT_EQ(count_ops(g, "Div"), 0) << c;
    EXPECT_EQ(count_ops(g, "Mul"), 1) << c;
    expect_same_bits(b.graph(), g, inputs_with_specials());
  }
}

TEST(ReduceStrength, LeavesInexactOrUnprovenFormsAlone) {
  const auto expect_untouched = [](const GraphBuilder& b, const std::string& what) {
    int n = -1;
    reduced(b, &n);
    EXPECT_EQ(n, 0) << what;
  };
  for (float e : {0.5f, 0.0f, 4.0f, -2.0f, 2.5f}) expect_untouched(pow_graph(e), "exponent " + std::to_string(e));
  expect_untouched(pow_graph(2.0f, 6), "opset 6");
  for (float c : {3.0f, 0.1f, 0.0f, 1e-40f, 0x1p-127f}) {
    GraphBuilder b;
    b.input("x", {10, 5}).scalar("c", c);
    b.node("Div", {"x", "c"}, {"y"}).output("y");
    expect_untouched(b, "divisor " + std::to_string(c));
  }
  {
    GraphBuilder b;  // a run-time exponent
    b.input("x", {3, 5}).input("e", {});
    b.node("Pow", {"x", "e"}, {"y"}).output("y");
    expect_untouched(b, "dynamic exponent");
  }
  {
    GraphBuilder b;  // the exponent would widen x's shape
    b.input("x", {5}).constant("e", Shape{1, 1}, {2.0f});
    b.node("Pow", {"x", "e"}, {"y"}).output("y");
    expect_untouched(b, "rank-widening exponent");
  }
  {
    GraphBuilder b;  // a constant base: the exponent is the input
    b.input("x", {5}).scalar("two", 2.0f);
    b.node("Pow", {"two", "x"}, {"y"}).output("y");
    expect_untouched(b, "constant base");
  }
  {
    GraphBuilder b;  // an integer base
    b.input("x", {5}, {}, DType::I64).int_scalar("e", 2);
    b.node("Pow", {"x", "e"}, {"y"}).output("y");
    expect_untouched(b, "integer base");
  }
}

TEST(ReduceStrength, KeepsAGraphOutputsName) {
  GraphBuilder b;
  b.input("x", {3, 5}).scalar("e", 2.0f);
  b.node("Pow", {"x", "e"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Mul");
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
}

}  // namespace
}  // namespace ignis::fuse_test
