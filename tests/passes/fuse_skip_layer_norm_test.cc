// SPDX-License-Identifier: Apache-2.0
// fuse_skip_layer_norm: Add [+ bias Add] + LayerNormalization -> ai.ignis.SkipLayerNorm.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const std::vector<std::vector<int64_t>> kShapes = {{2, 3, 8}, {2, 3, 8}};

GraphBuilder inputs() {
  GraphBuilder b;
  b.input("x", {-1, -1, 8}, {"batch", "seq", ""}).input("skip", {-1, -1, 8}, {"batch", "seq", ""});
  b.weight("gamma", {8}, 1, 0.5f, 1.5f).weight("beta", {8}, 2);
  return b;
}

TEST(FuseSkipLayerNorm, FusesTheResidualAdd) {
  GraphBuilder b = inputs();
  b.node("Add", {"x", "skip"}, {"s"})
      .node("LayerNormalization", {"s", "gamma", "beta"}, {"y"}, {{"epsilon", float_attr(1e-3f)}})
      .output("y");
  int n = 0;
  const ir::Graph g = run_pass(passes::fuse_skip_layer_norm, b.graph(), &n);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Node& f = g.nodes[0];
  EXPECT_EQ(f.op_type, "SkipLayerNorm");
  EXPECT_EQ(f.domain, "ai.ignis");
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "skip", "gamma", "beta"}));
  EXPECT_EQ(f.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(f.attrs.get_float("epsilon"), 1e-3f);
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShapes, 1)), 1e-5);
}

TEST(FuseSkipLayerNorm, KeepsTheSumForItsOtherReaders) {
  GraphBuilder b = inputs();
  b.node("Add", {"skip", "x"}, {"s"})
      .node("LayerNormalization", {"s", "gamma"}, {"y"}, {{"axis", int_attr(2)}})
      .node("Neg", {"s"}, {"z"})
      .output("y")
      .output("z")
      .output("s");
  const ir::Graph g = run_pass(passes::fuse_skip_layer_norm, b.graph());
  const ir::Node* f = find_op(g, "SkipLayerNorm");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->inputs.size(), 3u);
  EXPECT_EQ(f->outputs, (std::vector<std::string>{"y", "s"}));
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kShapes, 2)), 1e-5);
}

TEST(FuseSkipLayerNorm, FoldsAConstantBiasAndBroadcastsSkip) {
  // y = LN((x + bias) + pos), pos [1, seq, 8] broadcast over the batch.
  GraphBuilder b;
  b.input("x", {-1, -1, 8}, {"batch", "seq", ""}).input("pos", {1, -1, 8}, {"", "seq", ""});
  b.weight("gamma", {8}, 1, 0.5f, 1.5f).weight("beta", {8}, 2).weight("bias", {8}, 3);
  b.node("Add", {"bias", "x"}, {"xb"}).node("Add", {"pos", "xb"}, {"s"});
  b.node("LayerNormalization", {"s", "gamma", "beta"}, {"y"}).output("y");
  const ir::Graph g = run_pass(passes::fuse_skip_layer_norm, b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "pos", "gamma", "beta", "bias"}));
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{3, 4, 8}, {1, 4, 8}}, 3)), 1e-5);
}

TEST(FuseSkipLayerNorm, LeavesOtherAxesStatisticsOutputsAndNonAddInputs) {
  auto fused = [](const GraphBuilder& b) {
    return count_ops(run_pass(passes::fuse_skip_layer_norm, b.graph()), "SkipLayerNorm", "ai.ignis");
  };
  GraphBuilder axis = inputs();
  axis.weight("gamma2", {3, 8}, 5)
      .node("Add", {"x", "skip"}, {"s"})
      .node("LayerNormalization", {"s", "gamma2"}, {"y"}, {{"axis", int_attr(1)}})
      .output("y");
  EXPECT_EQ(fused(axis), 0);
  GraphBuilder stats = inputs();
  stats.node("Add", {"x", "skip"}, {"s"}).node("LayerNormalization", {"s", "gamma"}, {"y", "mean"}).output("y").output("mean");
  EXPECT_EQ(fused(stats), 0);
  GraphBuilder mul = inputs();
  mul.node("Mul", {"x", "skip"}, {"s"}).node("LayerNormalization", {"s", "gamma"}, {"y"}).output("y");
  EXPECT_EQ(fused(mul), 0);
  GraphBuilder stash = inputs();
  stash.node("Add", {"x", "skip"}, {"s"})
      .node("LayerNormalization", {"s", "gamma"}, {"y"}, {{"stash_type", int_attr(0)}})
      .output("y");
  EXPECT_EQ(fused(stash), 0);
  // A bias whose Add also feeds another node is not folded (the residual Add still is).
  GraphBuilder shared_bias = inputs();
  shared_bias.weight("bias", {8}, 3)
      .node("Add", {"x", "bias"}, {"xb"})
      .node("Add", {"xb", "skip"}, {"s"})
      .node("LayerNormalization", {"s", "gamma"}, {"y"})
      .node("Neg", {"xb"}, {"z"})
      .output("y")
      .output("z");
  const ir::Graph g = run_pass(passes::fuse_skip_layer_norm, shared_bias.graph());
  ASSERT_NE(find_op(g, "SkipLayerNorm"), nullptr);
  EXPECT_EQ(find_op(g, "SkipLayerNorm")->inputs.size(), 3u);
}

}  // namespace
}  // namespace ignis::fuse_test
