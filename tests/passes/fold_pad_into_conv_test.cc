// SPDX-License-Identifier: Apache-2.0
// fold_pad_into_conv: a zero Pad of the spatial axes becomes the Conv's pads, in every opset
// form of Pad, with the same outputs; pads it cannot express stay.
#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

ir::Graph folded(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::fold_pad_into_conv, b.graph(), rewrites);
}

// x [1, 3, 7, 8] -> Pad(pads) -> Conv(3x3, stride 2, conv_pads) -> y, opset 17.
GraphBuilder pad_conv(std::vector<int64_t> pads, std::vector<int64_t> conv_pads = {0, 0, 0, 0},
                      const std::string& mode = "constant") {
  GraphBuilder b(17);
  b.input("x", {1, 3, 7, 8}).weight("w", Shape{4, 3, 3, 3}, 1).weight("bias", Shape{4}, 2).ints_constant("pads", pads);
  b.node("Pad", {"x", "pads"}, {"p"}, {{"mode", string_attr(mode)}});
  b.node("Conv", {"p", "w", "bias"}, {"y"}, {{"strides", ints({2, 2})}, {"pads", ints(conv_pads)}});
  return b.output("y");
}

// The one Conv of a folded graph, reading x.
const ir::Node& only_conv(const ir::Graph& g) {
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  return g.nodes[0];
}

void expect_same_outputs(const GraphBuilder& b, const ir::Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  EXPECT_LT(reference_runner::max_difference(b.graph(), g, random_inputs(b.graph(), shapes, 3)), 1e-6);
}

TEST(FoldPadIntoConv, AddsTfSamePaddingToTheConvPads) {
  const GraphBuilder b = pad_conv({0, 0, 0, 0, 0, 0, 1, 1});
  int n = 0;
  const ir::Graph g = folded(b, &n);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(g.initializers.count("pads"), 0u);
  expect_same_outputs(b, g, {{1, 3, 7, 8}});
}

TEST(FoldPadIntoConv, AddsToPadsTheConvAlreadyHas) {
  const GraphBuilder b = pad_conv({0, 0, 2, 0, 0, 0, 1, 3}, {1, 1, 0, 1});
  const ir::Graph g = folded(b);
  EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{3, 1, 1, 4}));
  expect_same_outputs(b, g, {{1, 3, 7, 8}});
}

TEST(FoldPadIntoConv, ReadsPadsFromTheAttributeBeforeOpset11) {
  GraphBuilder b(10);
  b.input("x", {1, 2, 6, 6}).weight("w", Shape{3, 2, 3, 3}, 1);
  b.node("Pad", {"x"}, {"p"}, {{"pads", ints({0, 0, 1, 0, 0, 0, 0, 2})}, {"value", float_attr(0.0f)}});
  b.node("Conv", {"p", "w"}, {"y"}).output("y");
  const ir::Graph g = folded(b);
  EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{1, 0, 0, 2}));
  expect_same_outputs(b, g, {{1, 2, 6, 6}});
}

TEST(FoldPadIntoConv, TakesAnExplicitZeroValueAndAxes) {
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{2, 3}, std::vector<int64_t>{-2, -1}}) {
    GraphBuilder b(18);
    b.input("x", {2, 3, 5, 6}).weight("w", Shape{4, 3, 2, 2}, 1).ints_constant("pads", {1, 0, 0, 2});
    b.scalar("zero", 0.0f).ints_constant("axes", axes);
    b.node("Pad", {"x", "pads", "zero", "axes"}, {"p"}).node("Conv", {"p", "w"}, {"y"}).output("y");
    const ir::Graph g = folded(b);
    EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{1, 0, 0, 2}));
    expect_same_outputs(b, g, {{2, 3, 5, 6}});
  }
}

TEST(FoldPadIntoConv, FoldsIntoAOneDimensionalAndAValidConv) {
  {
    GraphBuilder b(17);
    b.input("x", {1, 2, 9}).weight("w", Shape{3, 2, 4}, 1).ints_constant("pads", {0, 0, 2, 0, 0, 1});
    b.node("Pad", {"x", "pads"}, {"p"}).node("Conv", {"p", "w"}, {"y"}, {{"strides", ints({2})}}).output("y");
    const ir::Graph g = folded(b);
    EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{2, 1}));
    expect_same_outputs(b, g, {{1, 2, 9}});
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 2, 6, 6}).weight("w", Shape{3, 2, 3, 3}, 1).ints_constant("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    b.node("Pad", {"x", "pads"}, {"p"}).node("Conv", {"p", "w"}, {"y"}, {{"auto_pad", string_attr("VALID")}});
    b.output("y");
    const ir::Graph g = folded(b);
    EXPECT_EQ(only_conv(g).attrs.get_string("auto_pad", ""), "NOTSET");
    EXPECT_EQ(only_conv(g).attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    expect_same_outputs(b, g, {{1, 2, 6, 6}});
  }
}

TEST(FoldPadIntoConv, LeavesPadsAConvCannotExpress) {
  const auto expect_untouched = [](const GraphBuilder& b, const std::string& what) {
    int n = -1;
    const ir::Graph g = folded(b, &n);
    EXPECT_EQ(n, 0) << what;
    EXPECT_EQ(count_ops(g, "Pad"), 1) << what;
  };
  expect_untouched(pad_conv({0, 0, 0, 0, 0, 0, 1, 1}, {0, 0, 0, 0}, "reflect"), "reflect");
  expect_untouched(pad_conv({0, 0, 0, 0, 0, 0, 1, 1}, {0, 0, 0, 0}, "edge"), "edge");
  expect_untouched(pad_conv({0, 1, 0, 0, 0, 0, 0, 0}), "channel padding");
  expect_untouched(pad_conv({1, 0, 0, 0, 0, 0, 0, 0}), "batch padding");
  expect_untouched(pad_conv({0, 0, -1, 0, 0, 0, 1, 1}), "cropping");
  {
    GraphBuilder b = pad_conv({0, 0, 0, 0, 0, 0, 1, 1});
    b.node("Neg", {"p"}, {"z"}).output("z");
    expect_untouched(b, "second reader");
  }
  {
    GraphBuilder b = pad_conv({0, 0, 0, 0, 0, 0, 1, 1});
    b.output("p");
    expect_untouched(b, "graph output");
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 3, 7, 8}).weight("w", Shape{4, 3, 3, 3}, 1).ints_constant("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    b.scalar("one", 1.0f).node("Pad", {"x", "pads", "one"}, {"p"}).node("Conv", {"p", "w"}, {"y"}).output("y");
    expect_untouched(b, "non-zero value");
  }
  {
    GraphBuilder b(10);
    b.input("x", {1, 3, 7, 8}).weight("w", Shape{4, 3, 3, 3}, 1);
    b.node("Pad", {"x"}, {"p"}, {{"pads", ints({0, 0, 1, 1, 0, 0, 1, 1})}, {"value", float_attr(-1.0f)}});
    b.node("Conv", {"p", "w"}, {"y"}).output("y");
    expect_untouched(b, "non-zero value attribute");
  }
  {
    GraphBuilder b(17);
    b.input("x", {1, 3, 7, 8}).input("pads", {8}, {}, DType::I64).weight("w", Shape{4, 3, 3, 3}, 1);
    b.node("Pad", {"x", "pads"}, {"p"}).node("Conv", {"p", "w"}, {"y"}).output("y");
    expect_untouched(b, "run-time pads");
  }
  {
    GraphBuilder same(17);
    same.input("x", {1, 3, 7, 8}).weight("w", Shape{4, 3, 3, 3}, 1).ints_constant("pads", {0, 0, 0, 0, 0, 0, 1, 1});
    same.node("Pad", {"x", "pads"}, {"p"});
    same.node("Conv", {"p", "w"}, {"y"}, {{"auto_pad", string_attr("SAME_UPPER")}}).output("y");
    expect_untouched(same, "auto_pad SAME_UPPER");
  }
  {
    // AveragePool's count_include_pad = 0 would leave the Pad's zeros out of the average.
    GraphBuilder b(17);
    b.input("x", {1, 3, 7, 8}).ints_constant("pads", {0, 0, 0, 0, 0, 0, 1, 1});
    b.node("Pad", {"x", "pads"}, {"p"}).node("AveragePool", {"p"}, {"y"}, {{"kernel_shape", ints({2, 2})}});
    expect_untouched(b.output("y"), "AveragePool");
  }
}

TEST(FoldPadIntoConv, KeepsTheDepthwiseChainOneFusedConvThroughThePipeline) {
  // tf2onnx's strided depthwise block: Pad -> Conv -> Mul -> Add (BatchNormalization) -> Clip.
  GraphBuilder b(17);
  b.input("x", {1, 8, 9, 9}).weight("w", Shape{8, 1, 3, 3}, 1).ints_constant("pads", {0, 0, 0, 0, 0, 0, 1, 1});
  b.weight("s", Shape{1, 8, 1, 1}, 2, 0.5f, 1.5f).weight("t", Shape{1, 8, 1, 1}, 3).scalar("lo", 0.0f).scalar("hi", 6.0f);
  b.node("Pad", {"x", "pads"}, {"p"});
  b.node("Conv", {"p", "w"}, {"c"}, {{"group", int_attr(8)}, {"strides", ints({2, 2})}});
  b.node("Mul", {"c", "s"}, {"m"}).node("Add", {"m", "t"}, {"a"}).node("Clip", {"a", "lo", "hi"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph());
  EXPECT_EQ(count_ops(g, "Pad"), 0);
  EXPECT_EQ(count_ops(g, "Mul"), 0);
  EXPECT_EQ(count_ops(g, "Add"), 0);
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{1, 8, 9, 9}}, 4)), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test
