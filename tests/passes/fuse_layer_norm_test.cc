// SPDX-License-Identifier: Apache-2.0
// fuse_layer_norm: layer normalization written in elementary ops -> LayerNormalization (ONNX
// from opset 17, ai.ignis below), checked against the unfused graph on random inputs.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const std::vector<std::vector<int64_t>> kShape = {{2, 5, 12}};

// mean / Sub / square / mean / + eps / Sqrt / Div [* gamma] [+ beta], with the reduction axis
// as the attribute (opset < 18) or the input (opset 18+), and the square as Pow or Mul.
GraphBuilder decomposed(int64_t opset, bool pow, bool affine) {
  GraphBuilder b(opset);
  b.input("x", {-1, -1, 12}, {"batch", "seq", ""});
  b.scalar("eps", 1e-5f).scalar("two", 2.0f);
  std::vector<std::pair<std::string, Attribute>> attrs;
  std::vector<std::string> mean_in = {"x"}, var_in = {"sq"};
  if (opset >= 18) {
    b.ints_constant("axes", {-1});
    mean_in.push_back("axes");
    var_in.push_back("axes");
  } else {
    attrs.emplace_back("axes", ints({-1}));
  }
  b.node("ReduceMean", mean_in, {"mean"}, attrs).node("Sub", {"x", "mean"}, {"d"});
  if (pow) b.node("Pow", {"d", "two"}, {"sq"});
  else b.node("Mul", {"d", "d"}, {"sq"});
  b.node("ReduceMean", var_in, {"var"}, attrs).node("Add", {"var", "eps"}, {"ve"});
  b.node("Sqrt", {"ve"}, {"s"});
  if (!affine) return b.node("Div", {"d", "s"}, {"y"}).output("y");
  b.weight("gamma", Shape{12}, 11).weight("beta", Shape{12}, 12);
  b.node("Div", {"d", "s"}, {"n"}).node("Mul", {"n", "gamma"}, {"g"}).node("Add", {"g", "beta"}, {"y"});
  return b.output("y");
}

TEST(FuseLayerNorm, FusesTheDecomposedFormAtEveryOpset) {
  for (int64_t opset : {13, 17, 18}) {
    for (bool pow : {true, false}) {
      for (bool affine : {true, false}) {
        GraphBuilder b = decomposed(opset, pow, affine);
        int n = 0;
        const ir::Graph g = run_pass(passes::fuse_layer_norm, b.graph(), &n);
        EXPECT_EQ(n, 1) << opset << pow << affine;
        ASSERT_EQ(g.nodes.size(), 1u);
        EXPECT_EQ(g.nodes[0].op_type, "LayerNormalization");
        EXPECT_EQ(g.nodes[0].domain, opset >= 17 ? "" : "ai.ignis");
        EXPECT_FLOAT_EQ(g.nodes[0].attrs.get_float("epsilon"), 1e-5f);
        EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
        EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShape, 5)), 1e-5) << opset << pow << affine;
      }
    }
  }
}

TEST(FuseLayerNorm, LeavesOtherAxesAndSharedIntermediatesAlone) {
  // Mean over axis 1: not a last-axis normalization.
  GraphBuilder b(13);
  b.input("x", {2, 5, 12}).scalar("eps", 1e-5f);
  b.node("ReduceMean", {"x"}, {"mean"}, {{"axes", ints({1})}}).node("Sub", {"x", "mean"}, {"d"});
  b.node("Mul", {"d", "d"}, {"sq"}).node("ReduceMean", {"sq"}, {"var"}, {{"axes", ints({1})}});
  b.node("Add", {"var", "eps"}, {"ve"}).node("Sqrt", {"ve"}, {"s"}).node("Div", {"d", "s"}, {"y"}).output("y");
  int n = 0;
  run_pass(passes::fuse_layer_norm, b.graph(), &n);
  EXPECT_EQ(n, 0);

  // The centered value is also a graph output: it must survive, so nothing fuses.
  GraphBuilder c = decomposed(17, true, false);
  c.output("d");
  run_pass(passes::fuse_layer_norm, c.graph(), &n);
  EXPECT_EQ(n, 0);
}

TEST(FuseLayerNorm, FeedsTheSkipLayerNormFusionBelowOpset17) {
  GraphBuilder b(13);
  b.input("x", {-1, -1, 12}, {"batch", "seq", ""}).input("skip", {-1, -1, 12}, {"batch", "seq", ""});
  b.scalar("eps", 1e-5f).scalar("two", 2.0f).weight("gamma", Shape{12}, 3).weight("beta", Shape{12}, 4);
  b.node("Add", {"x", "skip"}, {"sum"});
  b.node("ReduceMean", {"sum"}, {"mean"}, {{"axes", ints({-1})}}).node("Sub", {"sum", "mean"}, {"d"});
  b.node("Pow", {"d", "two"}, {"sq"}).node("ReduceMean", {"sq"}, {"var"}, {{"axes", ints({-1})}});
  b.node("Add", {"var", "eps"}, {"ve"}).node("Sqrt", {"ve"}, {"s"}).node("Div", {"d", "s"}, {"n"});
  b.node("Mul", {"n", "gamma"}, {"g"}).node("Add", {"g", "beta"}, {"y"}).output("y");
  ir::Graph g = run_pass(passes::fuse_layer_norm, b.graph());
  g = run_pass(passes::fuse_skip_layer_norm, g);
  EXPECT_EQ(count_ops(g, "SkipLayerNorm", "ai.ignis"), 1);
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 5, 12}, {2, 5, 12}}, 6)), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test
