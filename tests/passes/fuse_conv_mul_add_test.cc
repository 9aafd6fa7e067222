// SPDX-License-Identifier: Apache-2.0
// fuse_conv_mul_add: per-output-channel Mul / Add / Sub by constants after a Conv or
// ConvTranspose fold into its W and B (tf2onnx's BatchNormalization form), with the outputs
// equal within float32 rounding; constants that vary over anything but the channel stay.
#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

// As fuse_conv_bn's tests: the fold rounds W * s and B * s + t once, the graph rounds
// (W . x + B) * s + t; with values of magnitude ~1 and a few dozen taps that stays below this.
constexpr double kTolerance = 1e-5;

ir::Graph fused(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::fuse_conv_mul_add, b.graph(), rewrites);
}

void expect_close(const GraphBuilder& b, const ir::Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  EXPECT_LT(reference_runner::max_difference(b.graph(), g, random_inputs(b.graph(), shapes, 5)), kTolerance);
}

// x [1, 6, 7, 7] -> depthwise Conv (no B) -> Mul(s [1, 6, 1, 1]) -> Add(t [1, 6, 1, 1]) -> y.
GraphBuilder depthwise_mul_add() {
  GraphBuilder b(17);
  b.input("x", {1, 6, 7, 7}).weight("w", Shape{6, 1, 3, 3}, 1);
  b.weight("s", Shape{1, 6, 1, 1}, 2, 0.2f, 2.0f).weight("t", Shape{1, 6, 1, 1}, 3);
  b.node("Conv", {"x", "w"}, {"c"}, {{"group", int_attr(6)}, {"pads", ints({1, 1, 1, 1})}});
  b.node("Mul", {"c", "s"}, {"m"}).node("Add", {"m", "t"}, {"y"});
  return b.output("y");
}

TEST(FuseConvMulAdd, FoldsTfBatchNormIntoADepthwiseConv) {
  const GraphBuilder b = depthwise_mul_add();
  int n = 0;
  const ir::Graph g = fused(b, &n);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
  ASSERT_EQ(g.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.initializers.count("s"), 0u);
  EXPECT_EQ(g.initializers.count("t"), 0u);
  expect_close(b, g, {{1, 6, 7, 7}});
}

TEST(FuseConvMulAdd, TakesEveryPerChannelForm) {
  struct Form {
    std::string op;
    Shape shape;
    bool constant_first;
  };
  const std::vector<Form> forms = {
      {"Mul", Shape{}, false},          {"Mul", Shape{4, 1, 1}, true}, {"Add", Shape{1, 4, 1, 1}, true},
      {"Add", Shape{1, 1, 1}, false},   {"Sub", Shape{4, 1, 1}, false}, {"Mul", Shape{1, 4, 1, 1}, false},
  };
  for (const Form& f : forms) {
    for (bool bias : {false, true}) {
      GraphBuilder b(13);
      b.input("x", {2, 3, 6, 5}).weight("w", Shape{4, 3, 3, 3}, 1).weight("bias", Shape{4}, 2);
      b.weight("k", f.shape, 3, 0.5f, 1.5f);
      b.node("Conv", bias ? std::vector<std::string>{"x", "w", "bias"} : std::vector<std::string>{"x", "w"}, {"c"});
      b.node(f.op, f.constant_first ? std::vector<std::string>{"k", "c"} : std::vector<std::string>{"c", "k"}, {"y"});
      b.output("y");
      const std::string what = f.op + " " + f.shape.str() + (bias ? " with B" : "");
      int n = 0;
      const ir::Graph g = fused(b, &n);
      EXPECT_EQ(n, 1) << what;
      EXPECT_EQ(count_ops(g, f.op), 0) << what;
      expect_close(b, g, {{2, 3, 6, 5}});
    }
  }
}

TEST(FuseConvMulAdd, FoldsIntoAOneDimensionalConv) {
  GraphBuilder b(17);
  b.input("x", {1, 3, 10}).weight("w", Shape{5, 3, 3}, 1).weight("s", Shape{5, 1}, 2).weight("t", Shape{5, 1}, 3);
  b.node("Conv", {"x", "w"}, {"c"}).node("Mul", {"c", "s"}, {"m"}).node("Add", {"m", "t"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = fused(b, &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(g.nodes.size(), 1u);
  expect_close(b, g, {{1, 3, 10}});
}

TEST(FuseConvMulAdd, FoldsIntoAGroupedConvTranspose) {
  // W [C = 4, M / group = 3, 2, 2] with 2 groups: 6 output channels.
  GraphBuilder b(17);
  b.input("x", {1, 4, 5, 5}).weight("w", Shape{4, 3, 2, 2}, 1).weight("bias", Shape{6}, 2);
  b.weight("s", Shape{1, 6, 1, 1}, 3, -1.5f, 1.5f).weight("t", Shape{6, 1, 1}, 4);
  b.node("ConvTranspose", {"x", "w", "bias"}, {"c"}, {{"group", int_attr(2)}, {"strides", ints({2, 2})}});
  b.node("Mul", {"s", "c"}, {"m"}).node("Add", {"m", "t"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = fused(b, &n);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "ConvTranspose");
  expect_close(b, g, {{1, 4, 5, 5}});
}

TEST(FuseConvMulAdd, LeavesWhatIsNotPerChannel) {
  const auto expect_untouched = [](const GraphBuilder& b, const std::string& what) {
    int n = -1;
    fused(b, &n);
    EXPECT_EQ(n, 0) << what;
  };
  // x [1, 6, 7, 7] -> Conv -> op(c, k) -> y, k of `shape`.
  const auto conv_then = [](const std::string& op, const Shape& shape, bool conv_first = true) {
    GraphBuilder b(17);
    b.input("x", {1, 6, 7, 7}).weight("w", Shape{6, 6, 1, 1}, 1).weight("k", shape, 2);
    b.node("Conv", {"x", "w"}, {"c"});
    b.node(op, conv_first ? std::vector<std::string>{"c", "k"} : std::vector<std::string>{"k", "c"}, {"y"});
    return b.output("y");
  };
  expect_untouched(conv_then("Mul", Shape{1, 1, 7, 7}), "per-position scale");
  expect_untouched(conv_then("Add", Shape{1, 6, 7, 1}), "per-row shift");
  expect_untouched(conv_then("Mul", Shape{1, 1, 6, 1, 1}), "scale widening the rank");
  expect_untouched(conv_then("Add", Shape{3, 1, 1}), "wrong channel count");
  expect_untouched(conv_then("Sub", Shape{1, 6, 1, 1}, false), "constant minus conv");
  expect_untouched(conv_then("Div", Shape{1, 6, 1, 1}), "Div");
  {
    GraphBuilder b = conv_then("Mul", Shape{1, 6, 1, 1});
    b.node("Neg", {"c"}, {"z"}).output("z");
    expect_untouched(b, "second reader");
  }
  {
    GraphBuilder b = conv_then("Mul", Shape{1, 6, 1, 1});
    b.output("c");
    expect_untouched(b, "conv output is a graph output");
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 6, 7, 7}).input("w", {6, 6, 1, 1}).weight("k", Shape{1, 6, 1, 1}, 2);
    b.node("Conv", {"x", "w"}, {"c"}).node("Mul", {"c", "k"}, {"y"}).output("y");
    expect_untouched(b, "run-time weights");
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 6, 7, 7}).input("k", {1, 6, 1, 1}).weight("w", Shape{6, 6, 1, 1}, 1);
    b.node("Conv", {"x", "w"}, {"c"}).node("Mul", {"c", "k"}, {"y"}).output("y");
    expect_untouched(b, "run-time scale");
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 6, 7, 7}).weight("w", Shape{6, 6, 1, 1}, 1).scalar("k", INFINITY);
    b.node("Conv", {"x", "w"}, {"c"}).node("Mul", {"c", "k"}, {"y"}).output("y");
    expect_untouched(b, "infinite scale");
  }
}

TEST(FuseConvMulAdd, LetsTheConvTakeTheActivationThroughThePipeline) {
  GraphBuilder b(17);
  b.input("x", {1, 6, 7, 7}).weight("w", Shape{6, 6, 1, 1}, 1).weight("bias", Shape{6}, 2);
  b.weight("s", Shape{1, 6, 1, 1}, 3, 0.2f, 2.0f).weight("t", Shape{1, 6, 1, 1}, 4);
  b.scalar("lo", 0.0f).scalar("hi", 6.0f);
  b.node("Conv", {"x", "w", "bias"}, {"c"}).node("Mul", {"c", "s"}, {"m"}).node("Add", {"m", "t"}, {"a"});
  b.node("Clip", {"a", "lo", "hi"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(g.nodes[0].attrs.get_string("activation", ""), "Clip");
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{1, 6, 7, 7}}, 6)), kTolerance);
}

}  // namespace
}  // namespace ignis::fuse_test
