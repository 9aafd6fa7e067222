// SPDX-License-Identifier: Apache-2.0
// fuse_conv_activation: Conv [+ Add residual] + activation -> ai.ignis.FusedConv.
#include <limits>

#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const std::vector<std::vector<int64_t>> kXShape = {{2, 3, 9, 8}};

// x -> Conv(W, B, pad 1) -> c; the caller adds what follows.
GraphBuilder conv_graph(int64_t opset = 17) {
  GraphBuilder b(opset);
  b.input("x", {-1, 3, 9, 8}, {"batch", "", "", ""})
      .weight("W", {4, 3, 3, 3}, 1)
      .weight("B", {4}, 2)
      .node("Conv", {"x", "W", "B"}, {"c"}, {{"pads", ints({1, 1, 1, 1})}, {"kernel_shape", ints({3, 3})}});
  return b;
}

struct ActivationCase {
  std::string name;  // expected `activation`
  void (*add)(GraphBuilder&);
};

const std::vector<ActivationCase> kCases = {
    {"Relu", [](GraphBuilder& b) { b.node("Relu", {"c"}, {"y"}); }},
    {"Clip",
     [](GraphBuilder& b) { b.scalar("lo", 0.0f).scalar("hi", 0.75f).node("Clip", {"c", "lo", "hi"}, {"y"}); }},
    {"Sigmoid", [](GraphBuilder& b) { b.node("Sigmoid", {"c"}, {"y"}); }},
    {"SiLU", [](GraphBuilder& b) { b.node("Sigmoid", {"c"}, {"s"}).node("Mul", {"s", "c"}, {"y"}); }},
    {"HardSwish", [](GraphBuilder& b) { b.node("HardSwish", {"c"}, {"y"}); }},
    {"HardSigmoid",
     [](GraphBuilder& b) {
       b.node("HardSigmoid", {"c"}, {"y"}, {{"alpha", float_attr(0.3f)}, {"beta", float_attr(0.4f)}});
     }},
    {"LeakyRelu", [](GraphBuilder& b) { b.node("LeakyRelu", {"c"}, {"y"}, {{"alpha", float_attr(0.2f)}}); }},
};

TEST(FuseConvActivation, FusesEveryActivationAndMatchesTheUnfusedGraph) {
  for (const auto& tc : kCases) {
    GraphBuilder b = conv_graph();
    tc.add(b);
    b.output("y");
    int n = 0;
    const ir::Graph g = run_pass(passes::fuse_conv_activation, b.graph(), &n);
    EXPECT_EQ(n, 1) << tc.name;
    ASSERT_EQ(g.nodes.size(), 1u) << tc.name;
    const ir::Node& f = g.nodes[0];
    EXPECT_EQ(f.op_type, "FusedConv");
    EXPECT_EQ(f.domain, "ai.ignis");
    EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "W", "B"}));
    EXPECT_EQ(f.outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(f.attrs.get_string("activation"), tc.name);
    EXPECT_EQ(f.attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(g.opset("ai.ignis"), 1);
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kXShape, 3)), 1e-5) << tc.name;
  }
}

TEST(FuseConvActivation, CarriesActivationParameters) {
  GraphBuilder clip = conv_graph();
  clip.scalar("hi", 6.0f).node("Clip", {"c", "", "hi"}, {"y"}).output("y");
  const ir::Graph g = run_pass(passes::fuse_conv_activation, clip.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_FALSE(g.nodes[0].attrs.has("activation_min"));
  EXPECT_EQ(g.nodes[0].attrs.get_float("activation_max"), 6.0f);

  GraphBuilder clip6(6);  // opset 6: the bounds are attributes
  clip6.input("x", {2, 3, 9, 8})
      .weight("W", {4, 3, 3, 3}, 1)
      .node("Conv", {"x", "W"}, {"c"})
      .node("Clip", {"c"}, {"y"}, {{"min", float_attr(-0.5f)}})
      .output("y");
  const ir::Graph g6 = run_pass(passes::fuse_conv_activation, clip6.graph());
  ASSERT_EQ(g6.nodes.size(), 1u);
  EXPECT_EQ(g6.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(g6.nodes[0].attrs.get_float("activation_min"), -0.5f);
  EXPECT_EQ(g6.nodes[0].attrs.get_float("activation_max"), std::numeric_limits<float>::max());

  GraphBuilder leaky = conv_graph();
  leaky.node("LeakyRelu", {"c"}, {"y"}, {{"alpha", float_attr(0.25f)}}).output("y");
  EXPECT_EQ(run_pass(passes::fuse_conv_activation, leaky.graph()).nodes[0].attrs.get_float("activation_alpha"), 0.25f);
}

// Residual block: y = Relu(Conv1(x) + Conv2(x)), both convs with the same output shape.
GraphBuilder residual_graph(bool relu) {
  GraphBuilder b = conv_graph();
  b.weight("W2", {4, 3, 1, 1}, 4).node("Conv", {"x", "W2"}, {"z"});
  if (relu) b.node("Add", {"c", "z"}, {"s"}).node("Relu", {"s"}, {"y"});
  else b.node("Add", {"z", "c"}, {"y"});
  return b.output("y");
}

TEST(FuseConvActivation, FoldsAResidualAddOfTheSameShape) {
  for (bool relu : {true, false}) {
    GraphBuilder b = residual_graph(relu);
    const ir::Graph g = run_pass(passes::fuse_conv_activation, b.graph());
    // The first Conv takes the second's output as Z; the 1x1 Conv stays (its consumer is the
    // Add, but as the residual, not as the main path).
    EXPECT_EQ(count_ops(g, "FusedConv", "ai.ignis"), 1);
    EXPECT_EQ(count_ops(g, "Add"), 0);
    EXPECT_EQ(count_ops(g, "Relu"), 0);
    const ir::Node* f = find_op(g, "FusedConv");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(f->inputs.size(), 4u);
    EXPECT_EQ(f->outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(f->attrs.get_string("activation"), relu ? "Relu" : "");
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), kXShape, 5)), 1e-5);
  }
}

TEST(FuseConvActivation, SkipsGraphOutputsSecondConsumersAndOtherDtypes) {
  GraphBuilder out = conv_graph();
  out.node("Relu", {"c"}, {"y"}).output("y").output("c");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_conv_activation, out.graph()), "FusedConv", "ai.ignis"), 0);

  GraphBuilder shared = conv_graph();
  shared.node("Relu", {"c"}, {"y"}).node("Neg", {"c"}, {"z"}).output("y").output("z");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_conv_activation, shared.graph()), "FusedConv", "ai.ignis"), 0);

  // SiLU whose Sigmoid output is read elsewhere.
  GraphBuilder silu = conv_graph();
  silu.node("Sigmoid", {"c"}, {"s"}).node("Mul", {"c", "s"}, {"y"}).output("y").output("s");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_conv_activation, silu.graph()), "FusedConv", "ai.ignis"), 0);

  GraphBuilder f64;
  f64.input("x", {1, 3, 5, 5}, {}, DType::F64).input("W", {4, 3, 3, 3}, {}, DType::F64);
  f64.node("Conv", {"x", "W"}, {"c"}).node("Relu", {"c"}, {"y"}).output("y");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_conv_activation, f64.graph()), "FusedConv", "ai.ignis"), 0);

  // Clip whose bound is computed at run time.
  GraphBuilder dyn_clip = conv_graph();
  dyn_clip.input("hi", {}).node("Clip", {"c", "", "hi"}, {"y"}).output("y");
  EXPECT_EQ(count_ops(run_pass(passes::fuse_conv_activation, dyn_clip.graph()), "FusedConv", "ai.ignis"), 0);
}

TEST(FuseConvActivation, DoesNotFoldAResidualThatBroadcasts) {
  // Z is a per-channel [1, 4, 1, 1] value: the Add broadcasts it, so it is not a residual.
  GraphBuilder chan = conv_graph();
  chan.weight("bias2", {1, 4, 1, 1}, 6).node("Add", {"c", "bias2"}, {"s"}).node("Relu", {"s"}, {"y"}).output("y");
  ir::Graph g = run_pass(passes::fuse_conv_activation, chan.graph());
  EXPECT_EQ(count_ops(g, "FusedConv", "ai.ignis"), 0);
  EXPECT_EQ(count_ops(g, "Add"), 1);

  // Z of the same rank whose spatial size cannot be proven equal (a second input).
  GraphBuilder other = conv_graph();
  other.input("z", {-1, 4, -1, -1}, {"batch", "", "h", "w"})
      .node("Add", {"c", "z"}, {"s"})
      .node("Relu", {"s"}, {"y"})
      .output("y");
  g = run_pass(passes::fuse_conv_activation, other.graph());
  EXPECT_EQ(count_ops(g, "Add"), 1);
  // The Relu cannot be folded either: the Add sits between it and the Conv.
  EXPECT_EQ(count_ops(g, "FusedConv", "ai.ignis"), 0);
}

}  // namespace
}  // namespace ignis::fuse_test
