// SPDX-License-Identifier: Apache-2.0
// fuse_gelu: the erf and tanh forms of GELU -> ai.ignis.Gelu (ONNX Gelu from opset 20).
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const std::vector<std::vector<int64_t>> kShape = {{2, 3, 7}};

GraphBuilder with_input(int64_t opset = 17) {
  GraphBuilder b(opset);
  b.input("x", {-1, -1, 7}, {"batch", "seq", ""});
  b.scalar("one", 1.0f).scalar("half", 0.5f);
  return b;
}

// 0.5 * x * (1 + erf(x / sqrt(2))), in the grouping `tail` selects:
// 0: (x * (1 + f)) * 0.5    1: (0.5 * x) * (1 + f)    2: x * ((1 + f) * 0.5)
GraphBuilder erf_gelu(int tail, bool mul_form = false, int64_t opset = 17) {
  GraphBuilder b = with_input(opset);
  if (mul_form) b.scalar("inv_sqrt2", 0.70710678f).node("Mul", {"inv_sqrt2", "x"}, {"d"});
  else b.scalar("sqrt2", 1.4142135f).node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"}).node("Add", {"one", "e"}, {"p"});
  if (tail == 0) b.node("Mul", {"x", "p"}, {"q"}).node("Mul", {"q", "half"}, {"y"});
  if (tail == 1) b.node("Mul", {"half", "x"}, {"h"}).node("Mul", {"p", "h"}, {"y"});
  if (tail == 2) b.node("Mul", {"p", "half"}, {"q"}).node("Mul", {"q", "x"}, {"y"});
  return b.output("y");
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), x^3 as Pow or as two Muls.
GraphBuilder tanh_gelu(bool pow) {
  GraphBuilder b = with_input();
  b.scalar("k", 0.7978845608f).scalar("c", 0.044715f).scalar("three", 3.0f);
  if (pow) b.node("Pow", {"x", "three"}, {"x3"});
  else b.node("Mul", {"x", "x"}, {"x2"}).node("Mul", {"x2", "x"}, {"x3"});
  b.node("Mul", {"c", "x3"}, {"w"}).node("Add", {"x", "w"}, {"v"}).node("Mul", {"v", "k"}, {"u"});
  b.node("Tanh", {"u"}, {"t"}).node("Add", {"t", "one"}, {"p"});
  b.node("Mul", {"x", "p"}, {"q"}).node("Mul", {"q", "half"}, {"y"});
  return b.output("y");
}

void expect_single_gelu(const ir::Graph& g, const std::string& domain, const std::string& approximate) {
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Gelu");
  EXPECT_EQ(g.nodes[0].domain, domain);
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.nodes[0].attrs.get_string("approximate", "none"), approximate);
}

TEST(FuseGelu, FusesTheErfFormInEveryGrouping) {
  for (int tail = 0; tail < 3; ++tail) {
    for (bool mul_form : {false, true}) {
      GraphBuilder b = erf_gelu(tail, mul_form);
      int n = 0;
      const ir::Graph g = run_pass(passes::fuse_gelu, b.graph(), &n);
      EXPECT_EQ(n, 1);
      expect_single_gelu(g, "ai.ignis", "none");
      EXPECT_EQ(g.opset("ai.ignis"), 1);
      EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShape, 1)), 1e-6) << tail;
    }
  }
}

TEST(FuseGelu, FusesTheTanhForm) {
  for (bool pow : {true, false}) {
    GraphBuilder b = tanh_gelu(pow);
    const ir::Graph g = run_pass(passes::fuse_gelu, b.graph());
    expect_single_gelu(g, "ai.ignis", "tanh");
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShape, 2)), 1e-6);
  }
}

TEST(FuseGelu, EmitsTheOnnxGeluFromOpset20) {
  GraphBuilder b = erf_gelu(0, false, 20);
  const ir::Graph g = run_pass(passes::fuse_gelu, b.graph());
  expect_single_gelu(g, "", "none");
  EXPECT_EQ(g.opset("ai.ignis"), 0);
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShape, 3)), 1e-6);
}

TEST(FuseGelu, RejectsOtherConstantsSharedIntermediatesAndWideningScalars) {
  auto gelus = [](const GraphBuilder& b) {
    const ir::Graph g = run_pass(passes::fuse_gelu, b.graph());
    return count_ops(g, "Gelu", "ai.ignis") + count_ops(g, "Gelu");
  };
  // x / 2 instead of x / sqrt(2).
  GraphBuilder two = with_input();
  two.scalar("sqrt2", 2.0f).node("Div", {"x", "sqrt2"}, {"d"}).node("Erf", {"d"}, {"e"});
  two.node("Add", {"e", "one"}, {"p"}).node("Mul", {"x", "p"}, {"q"}).node("Mul", {"q", "half"}, {"y"}).output("y");
  EXPECT_EQ(gelus(two), 0);
  // The Erf output is also a graph output.
  GraphBuilder out = erf_gelu(0);
  EXPECT_EQ(gelus(out.output("e")), 0);
  // The inner product is read by another node.
  GraphBuilder shared = erf_gelu(0);
  EXPECT_EQ(gelus(shared.node("Neg", {"q"}, {"z"}).output("z")), 0);
  // 0.5 as a [1, 1, 1, 1] constant: the Mul would widen x to rank 4.
  GraphBuilder wide = with_input();
  wide.constant("half4", {1, 1, 1, 1}, {0.5f}).scalar("sqrt2", 1.4142135f);
  wide.node("Div", {"x", "sqrt2"}, {"d"}).node("Erf", {"d"}, {"e"}).node("Add", {"e", "one"}, {"p"});
  wide.node("Mul", {"x", "p"}, {"q"}).node("Mul", {"q", "half4"}, {"y"}).output("y");
  EXPECT_EQ(gelus(wide), 0);
  // Multiplying by a different value than the Erf's argument.
  GraphBuilder other = with_input();
  other.input("w", {-1, -1, 7}, {"batch", "seq", ""}).scalar("sqrt2", 1.4142135f);
  other.node("Div", {"x", "sqrt2"}, {"d"}).node("Erf", {"d"}, {"e"}).node("Add", {"e", "one"}, {"p"});
  other.node("Mul", {"w", "p"}, {"q"}).node("Mul", {"q", "half"}, {"y"}).output("y");
  EXPECT_EQ(gelus(other), 0);
}

}  // namespace
}  // namespace ignis::fuse_test
