// SPDX-License-Identifier: Apache-2.0
// fuse_qdq_into_lookup_table: a float function of one quantized tensor, quantized again,
// becomes ai.ignis QLinearLookup with the function's 256 results. The results are checked
// against the graph run unoptimized (the float ops through their kernels): within one step of y,
// the largest difference a lookup may show where the kernels' float results differ in the last
// bit at a rounding boundary. And the forms it must leave alone.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr float kXScale = 0.04f, kSigmoidScale = 1.0f / 255, kYScale = 0.03f;

// x quantized (type t, zero point x_zp) and dequantized: the head every pattern reads.
GraphBuilder quantized_input() {
  GraphBuilder b(13);
  b.input("x", {1, 4, 5, 6});
  b.scalar("xs", kXScale).scalar("ys", kYScale);
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  return b;
}

ir::Graph finish(GraphBuilder& b, DType t, int x_zp, const std::string& value) {
  b.node("QuantizeLinear", {value, "ys", "yz"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  b.output("y");
  ir::Graph g = b.graph();
  g.initializers["xz"] = filled(t, Shape{}, x_zp);
  g.initializers["yz"] = filled(t, Shape{}, t == DType::U8 ? 100 : -20);
  g.initializers["sz"] = filled(t, Shape{}, t == DType::U8 ? 0 : -128);
  return g;
}

// SiLU as onnxruntime's quantizer writes it: Mul(DQ(x), DQ(Q(Sigmoid(DQ(x))))) -> Q.
ir::Graph silu_graph(DType t, int x_zp, bool sigmoid_is_output = false) {
  GraphBuilder b = quantized_input();
  b.scalar("ss", kSigmoidScale);
  b.node("Sigmoid", {"xd"}, {"s"});
  b.node("QuantizeLinear", {"s", "ss", "sz"}, {"sq"});
  b.node("DequantizeLinear", {"sq", "ss", "sz"}, {"sd"});
  b.node("Mul", {"xd", "sd"}, {"v"});
  if (sigmoid_is_output) b.output("s");
  return finish(b, t, x_zp, "v");
}

// HardSwish spelled out with scalar constants: x * Clip(x + 3, 0, 6) / 6.
ir::Graph hard_swish_graph(DType t, int x_zp) {
  GraphBuilder b = quantized_input();
  b.scalar("three", 3.0f).scalar("six", 6.0f).scalar("zero", 0.0f);
  b.node("Add", {"xd", "three"}, {"a"});
  b.node("Clip", {"a", "zero", "six"}, {"c"});
  b.node("Mul", {"xd", "c"}, {"m"});
  b.node("Div", {"m", "six"}, {"v"});
  return finish(b, t, x_zp, "v");
}

TEST(FuseQdqIntoLookupTable, RewritesQuantizedSiLU) {
  for (DType t : {DType::U8, DType::I8}) {
    const int x_zp = t == DType::U8 ? 130 : 3;
    const ir::Graph g = silu_graph(t, x_zp);
    const ir::Graph f = optimized(g);
    EXPECT_EQ(count_ops(f, "QLinearLookup", "ai.ignis"), 1);
    EXPECT_EQ(count_ops(f, "Sigmoid"), 0);
    EXPECT_EQ(count_ops(f, "Mul"), 0);
    EXPECT_EQ(count_ops(f, "QLinearMul", "com.microsoft"), 0);
    const ir::Node* lookup = find_op(f, "QLinearLookup", "ai.ignis");
    ASSERT_NE(lookup, nullptr);
    EXPECT_EQ(lookup->inputs[0], "xq");
    // x in [-2, 2] at 0.04 per step covers 100 of the 256 codes.
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 4, 5, 6}}, 31), OptLevel::All), kYScale * 1.001);
  }
}

TEST(FuseQdqIntoLookupTable, RewritesFunctionsWithScalarConstants) {
  for (DType t : {DType::U8, DType::I8}) {
    const ir::Graph g = hard_swish_graph(t, t == DType::U8 ? 128 : 0);
    int n = 0;
    const ir::Graph f = run_pass(passes::fuse_qdq_into_lookup_table, g, &n);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(count_ops(f, "QLinearLookup", "ai.ignis"), 1);
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 4, 5, 6}}, 32), OptLevel::All), kYScale * 1.001);
  }
}

TEST(FuseQdqIntoLookupTable, KeepsValuesOthersRead) {
  // The sigmoid is also a graph output: the lookup replaces only y's QuantizeLinear.
  const ir::Graph g = silu_graph(DType::U8, 128, true);
  const ir::Graph f = optimized(g);
  EXPECT_EQ(count_ops(f, "Sigmoid"), 1);
  EXPECT_GE(count_ops(f, "QLinearLookup", "ai.ignis"), 1);
  EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 4, 5, 6}}, 33), OptLevel::All), kYScale * 1.001);
}

TEST(FuseQdqIntoLookupTable, LeavesFunctionsOfTwoTensorsAndOtherForms) {
  // Mul of two quantized tensors: a function of two inputs, no table.
  {
    GraphBuilder b(13);
    b.input("x", {1, 4, 5, 6}).input("w", {1, 4, 5, 6});
    b.scalar("xs", kXScale).scalar("ys", kYScale);
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
    b.node("QuantizeLinear", {"w", "xs", "xz"}, {"wq"});
    b.node("DequantizeLinear", {"wq", "xs", "xz"}, {"wd"});
    b.node("Mul", {"xd", "wd"}, {"v"});
    const ir::Graph g = finish(b, DType::U8, 128, "v");
    EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_lookup_table, g), "QLinearLookup", "ai.ignis"), 0);
  }
  // A constant that is not a scalar would broadcast: no table.
  {
    GraphBuilder b = quantized_input();
    b.weight("per_channel", {4, 1, 1}, 5, 0.5f, 1.5f);
    b.node("Mul", {"xd", "per_channel"}, {"v"});
    const ir::Graph g = finish(b, DType::U8, 128, "v");
    EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_lookup_table, g), "QLinearLookup", "ai.ignis"), 0);
  }
  // A bare requantization computes nothing.
  {
    GraphBuilder b = quantized_input();
    const ir::Graph g = finish(b, DType::U8, 128, "xd");
    EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_lookup_table, g), "QLinearLookup", "ai.ignis"), 0);
  }
  // An op that is not element-wise (Softmax mixes elements).
  {
    GraphBuilder b = quantized_input();
    b.node("Softmax", {"xd"}, {"v"});
    const ir::Graph g = finish(b, DType::U8, 128, "v");
    EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_lookup_table, g), "QLinearLookup", "ai.ignis"), 0);
  }
}

}  // namespace
}  // namespace ignis::fuse_test
