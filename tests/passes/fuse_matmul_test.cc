// SPDX-License-Identifier: Apache-2.0
// fuse_matmul_add_gemm (MatMul + Add -> Gemm) and fuse_matmul_activation
// (MatMul [+ bias] [+ activation] -> ai.ignis.FusedMatMul).
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

// y = Add(MatMul(a, W [k, n]), bias); `a_dims` with symbolic "batch"/"seq" as -1.
GraphBuilder matmul_add(std::vector<int64_t> a_dims, const Shape& bias_shape, bool bias_first = false) {
  GraphBuilder b;
  std::vector<std::string> names(a_dims.size());
  if (a_dims[0] < 0) names[0] = "batch";
  if (a_dims.size() > 2 && a_dims[1] < 0) names[1] = "seq";
  b.input("a", a_dims, names).weight("W", {6, 5}, 1).weight("bias", bias_shape, 2);
  b.node("MatMul", {"a", "W"}, {"m"});
  if (bias_first) b.node("Add", {"bias", "m"}, {"y"});
  else b.node("Add", {"m", "bias"}, {"y"});
  return b;
}

TEST(FuseMatMulAddGemm, Rewrites2DMatMulWithConstantBiasAsGemm) {
  for (const Shape& bias : {Shape{5}, Shape{1, 5}, Shape{1}, Shape{}}) {
    for (bool bias_first : {false, true}) {
      GraphBuilder b = matmul_add({-1, 6}, bias, bias_first);
      b.output("y");
      int n = 0;
      const ir::Graph g = run_pass(passes::fuse_matmul_add_gemm, b.graph(), &n);
      EXPECT_EQ(n, 1);
      ASSERT_EQ(g.nodes.size(), 1u);
      EXPECT_EQ(g.nodes[0].op_type, "Gemm");
      EXPECT_EQ(g.nodes[0].domain, "");
      EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "W", "bias"}));
      EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
      EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{7, 6}}, 3), OptLevel::Extended), 1e-5);
    }
  }
}

TEST(FuseMatMulAddGemm, LeavesOtherRanksShapesAndUsesAlone) {
  auto gemms = [](const GraphBuilder& b) {
    return count_ops(run_pass(passes::fuse_matmul_add_gemm, b.graph()), "Gemm");
  };
  GraphBuilder three_d = matmul_add({-1, 4, 6}, {5});
  EXPECT_EQ(gemms(three_d.output("y")), 0);  // Gemm is 2-D only
  GraphBuilder full_c = matmul_add({3, 6}, {3, 5});
  EXPECT_EQ(gemms(full_c.output("y")), 0);  // C must be a row (a [M, N] C is valid but not matched)
  GraphBuilder wide_c = matmul_add({3, 6}, {2, 1, 5});
  EXPECT_EQ(gemms(wide_c.output("y")), 0);  // the Add would widen the product
  GraphBuilder shared = matmul_add({3, 6}, {5});
  EXPECT_EQ(gemms(shared.node("Neg", {"m"}, {"z"}).output("y").output("z")), 0);
  GraphBuilder out = matmul_add({3, 6}, {5});
  EXPECT_EQ(gemms(out.output("y").output("m")), 0);
  GraphBuilder dyn;
  dyn.input("a", {3, 6}).input("W", {6, 5}).weight("bias", {5}, 1);
  dyn.node("MatMul", {"a", "W"}, {"m"}).node("Add", {"m", "bias"}, {"y"}).output("y");
  EXPECT_EQ(gemms(dyn), 0);  // non-constant weight
}

TEST(FuseMatMulActivation, FoldsBiasAndActivation) {
  struct Case {
    std::string act;
    bool bias;
  };
  for (const Case& c : std::vector<Case>{{"Relu", true}, {"Relu", false}, {"", true}, {"SiLU", true}, {"Sigmoid", false}}) {
    GraphBuilder b;
    b.input("a", {-1, -1, 6}, {"batch", "seq", ""}).weight("W", {6, 5}, 1).weight("bias", {5}, 2);
    b.node("MatMul", {"a", "W"}, {"m"});
    std::string t = "m";
    if (c.bias) {
      b.node("Add", {"bias", "m"}, {"t"});
      t = "t";
    }
    if (c.act == "Relu") b.node("Relu", {t}, {"y"});
    else if (c.act == "Sigmoid") b.node("Sigmoid", {t}, {"y"});
    else if (c.act == "SiLU") b.node("Sigmoid", {t}, {"s"}).node("Mul", {t, "s"}, {"y"});
    else b.node("Identity", {t}, {"y"});
    b.output("y");
    const ir::Graph g = run_pass(passes::fuse_matmul_activation, b.graph());
    const ir::Node* f = find_op(g, "FusedMatMul");
    ASSERT_NE(f, nullptr) << c.act;
    EXPECT_EQ(f->inputs.size(), c.bias ? 3u : 2u);
    EXPECT_EQ(f->attrs.get_string("activation"), c.act);
    EXPECT_EQ(g.opset("ai.ignis"), 1);
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3, 6}}, 4)), 1e-5) << c.act;
  }
}

TEST(FuseMatMulActivation, TakesGeluAfterFuseGelu) {
  GraphBuilder b;
  b.input("a", {-1, 4, 6}, {"batch", "", ""}).weight("W", {6, 5}, 1).weight("bias", {5}, 2);
  b.scalar("sqrt2", 1.4142135f).scalar("one", 1.0f).scalar("half", 0.5f);
  b.node("MatMul", {"a", "W"}, {"m"}).node("Add", {"m", "bias"}, {"x"});
  b.node("Div", {"x", "sqrt2"}, {"d"}).node("Erf", {"d"}, {"e"}).node("Add", {"e", "one"}, {"p"});
  b.node("Mul", {"x", "p"}, {"q"}).node("Mul", {"q", "half"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "FusedMatMul");
  EXPECT_EQ(g.nodes[0].attrs.get_string("activation"), "Gelu");
  EXPECT_EQ(g.initializers.count("sqrt2"), 0u);  // the GELU constants are gone
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{3, 4, 6}}, 5)), 1e-5);
}

TEST(FuseMatMulActivation, LeavesBiasesThatDoNotMatchAndSharedProducts) {
  // A [1, 5] bias is valid for the Add but not a 1-D FusedMatMul bias: nothing to fuse.
  GraphBuilder row = matmul_add({-1, 3, 6}, {1, 5});
  ir::Graph g = run_pass(passes::fuse_matmul_activation, row.output("y").graph());
  EXPECT_EQ(count_ops(g, "FusedMatMul", "ai.ignis"), 0);
  // A [3, 5] matrix bias: not a bias; the Relu cannot be reached past the Add either.
  GraphBuilder mat = matmul_add({-1, 3, 6}, {3, 5});
  mat.node("Relu", {"y"}, {"r"}).output("r");
  g = run_pass(passes::fuse_matmul_activation, mat.graph());
  EXPECT_EQ(count_ops(g, "FusedMatMul", "ai.ignis"), 0);
  // The product is read twice.
  GraphBuilder shared = matmul_add({-1, 3, 6}, {5});
  shared.node("Neg", {"m"}, {"z"}).output("y").output("z");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_matmul_activation, shared.graph()), "FusedMatMul", "ai.ignis"), 0);
  // The biased sum is a graph output: the bias folds, the activation cannot.
  GraphBuilder out = matmul_add({-1, 3, 6}, {5});
  out.node("Relu", {"y"}, {"r"}).output("r").output("y");
  g = run_pass(passes::fuse_matmul_activation, out.graph());
  ASSERT_NE(find_op(g, "FusedMatMul"), nullptr);
  EXPECT_EQ(find_op(g, "FusedMatMul")->attrs.get_string("activation"), "");
  EXPECT_EQ(count_ops(g, "Relu"), 1);
  EXPECT_LT(optimized_vs_plain(out.graph(), random_inputs(out.graph(), {{2, 3, 6}}, 6)), 1e-5);
  // Integer MatMul: not float32.
  GraphBuilder ints;
  ints.input("a", {2, 6}, {}, DType::I32).input("w", {6, 5}, {}, DType::I32);
  ints.node("MatMul", {"a", "w"}, {"m"}).node("Relu", {"m"}, {"y"}).output("y");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_matmul_activation, ints.graph()), "FusedMatMul", "ai.ignis"), 0);
}

}  // namespace
}  // namespace ignis::fuse_test
