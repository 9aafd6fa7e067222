// SPDX-License-Identifier: Apache-2.0
// fuse_dynamic_quantize_rows: the per-row symmetric int8 quantization `ignis quantize --mode
// dynamic --per-row` writes (Abs, ReduceMax, Max, Div; Div, Round, Clip, Cast) becomes
// ai.ignis.DynamicQuantizeRows, and fuse_matmul_integer then takes its row scale into
// MatMulIntegerToFloat; both bit for bit what the unfused ops give.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr int64_t kK = 19, kN = 7;

struct Pattern {
  int64_t opset = 17;     // 18+: ReduceMax's axes as an input
  int64_t axis = -1;      // the ReduceMax axis (of a rank-3 x)
  float low = -127.0f;    // the Clip's lower bound
  int64_t cast_to = 3;    // TensorProto.INT8
  bool scale_output = false;  // the row scale also a graph output
  bool rounded_read_twice = false;
  bool matmul = true;     // MatMulInteger -> Cast -> Mul(w_scale) -> Mul(s) -> Add(bias) after it
};

ir::Graph per_row(const Pattern& p) {
  GraphBuilder b(p.opset);
  b.input("x", {-1, 3, kK}, {"batch", "", ""});
  b.scalar("floor", 1e-30f).scalar("limit", 127.0f).scalar("low", p.low).scalar("high", 127.0f);
  b.node("Abs", {"x"}, {"a"});
  if (p.opset >= 18) {
    b.ints_constant("axes", {p.axis});
    b.node("ReduceMax", {"a", "axes"}, {"m"}, {{"keepdims", int_attr(1)}});
  } else {
    b.node("ReduceMax", {"a"}, {"m"}, {{"axes", ints({p.axis})}, {"keepdims", int_attr(1)}});
  }
  b.node("Max", {"m", "floor"}, {"mf"});
  b.node("Div", {"mf", "limit"}, {"s"});
  b.node("Div", {"x", "s"}, {"xs"});
  b.node("Round", {"xs"}, {"r"});
  b.node("Clip", {"r", "low", "high"}, {"c"});
  b.node("Cast", {"c"}, {"q"}, {{"to", int_attr(p.cast_to)}});
  if (p.matmul) {
    b.weight("w_scale", {kN}, 3, 0.01f, 0.02f).weight("bias", {kN}, 4);
    b.node("MatMulInteger", {"q", "Wq"}, {"prod"});
    b.node("Cast", {"prod"}, {"prod_f"}, {{"to", int_attr(1)}});
    b.node("Mul", {"prod_f", "w_scale"}, {"by_column"});
    b.node("Mul", {"by_column", "s"}, {"by_row"});
    b.node("Add", {"by_row", "bias"}, {"y"});
    b.output("y");
  } else {
    b.node("Cast", {"q"}, {"y"}, {{"to", int_attr(1)}});
    b.output("y");
  }
  if (p.scale_output) b.output("s");
  if (p.rounded_read_twice) b.node("Neg", {"r"}, {"z"}).output("z");
  ir::Graph g = b.graph();
  Tensor w = Tensor::empty(DType::I8, Shape{kK, kN});
  for (int64_t i = 0; i < w.numel(); ++i) w.data_as<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  g.initializers["Wq"] = w;
  return g;
}

// x with rows of very different ranges, one of them all zeros (its scale is the floor's).
NamedTensors rows_of_many_ranges(const ir::Graph& g, int64_t batch, uint32_t seed) {
  NamedTensors feeds = random_inputs(g, {{batch, 3, kK}}, seed);
  float* x = feeds[0].second.data_as<float>();
  for (int64_t r = 0; r < batch * 3; ++r)
    for (int64_t i = 0; i < kK; ++i) x[r * kK + i] *= r == 1 ? 0.0f : std::pow(10.0f, static_cast<float>(r % 5) - 2.0f);
  return feeds;
}

TEST(FuseDynamicQuantizeRows, FoldsTheChainAndTheRowScale) {
  for (int64_t opset : {17, 18}) {
    for (int64_t axis : {-1, 2}) {
      const ir::Graph g = per_row({.opset = opset, .axis = axis});
      int n = 0;
      const ir::Graph f = run_pass(passes::fuse_dynamic_quantize_rows, g, &n);
      EXPECT_EQ(n, 1);
      const ir::Node* node = find_op(f, "DynamicQuantizeRows");
      ASSERT_NE(node, nullptr);
      EXPECT_EQ(node->inputs, std::vector<std::string>{"x"});
      EXPECT_EQ(node->outputs, (std::vector<std::string>{"q", "s"}));
      EXPECT_EQ(node->attrs.get_int("limit", 0), 127);
      EXPECT_EQ(node->attrs.get_float("floor", 0.0f), 1e-30f);
      for (const char* op : {"Abs", "ReduceMax", "Max", "Div", "Round", "Clip"}) EXPECT_EQ(count_ops(f, op), 0) << op;

      const ir::Graph all = optimized(g);
      const ir::Node* mm = find_op(all, "MatMulIntegerToFloat");
      ASSERT_NE(mm, nullptr);
      ASSERT_EQ(mm->inputs.size(), 7u);
      EXPECT_EQ(mm->inputs[5], "bias");
      EXPECT_EQ(mm->inputs[6], "s");
      EXPECT_EQ(all.nodes.size(), 2u);
      // Both kernels compute each step as the plain ops do: equal bit for bit.
      EXPECT_EQ(optimized_vs_plain(g, rows_of_many_ranges(g, 5, 7)), 0.0) << "opset " << opset;
    }
  }
}

TEST(FuseDynamicQuantizeRows, KeepsTheScaleWhenTheGraphReturnsIt) {
  const ir::Graph g = per_row({.scale_output = true, .matmul = false});
  const ir::Graph f = run_pass(passes::fuse_dynamic_quantize_rows, g);
  EXPECT_EQ(count_ops(f, "DynamicQuantizeRows", "ai.ignis"), 1);
  EXPECT_EQ(optimized_vs_plain(g, rows_of_many_ranges(g, 3, 8)), 0.0);
}

TEST(FuseDynamicQuantizeRows, LeavesOtherAxesBoundsTypesAndSharedValues) {
  // The maximum over another axis, a Clip that is not the symmetric range, a cast to uint8,
  // and a rounded value read elsewhere: each stays as it is, and still runs.
  for (const Pattern& p : {Pattern{.axis = 1, .matmul = false}, Pattern{.low = -128.0f, .matmul = false},
                           Pattern{.cast_to = 2, .matmul = false}, Pattern{.rounded_read_twice = true}}) {
    const ir::Graph g = per_row(p);
    const ir::Graph f = run_pass(passes::fuse_dynamic_quantize_rows, g);
    EXPECT_EQ(count_ops(f, "DynamicQuantizeRows", "ai.ignis"), 0);
    EXPECT_EQ(count_ops(f, "Round"), 1);
    EXPECT_EQ(optimized_vs_plain(g, rows_of_many_ranges(g, 2, 9)), 0.0);
  }
}

}  // namespace
}  // namespace ignis::fuse_test
