// SPDX-License-Identifier: Apache-2.0
// fuse_matmul_integer: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(scale) [-> Add(bias)]
// (onnxruntime's quantize_dynamic pattern) becomes ai.ignis.MatMulIntegerToFloat, with the
// same results as the unfused ops.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr int64_t kK = 6, kN = 5;

Attribute cast_to(int64_t to) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = to;
  return a;
}

struct Pattern {
  Shape w_scale = Shape{kN};  // the weight's scale: per column or scalar
  bool bias = true;
  int64_t cast_to = 1;        // TensorProto.FLOAT
  bool cast_read_twice = false;
};

// y = [Add(bias)] Mul(Cast(MatMulInteger(DQL(x), Wq, x_zp, w_zp)), Mul(x_scale, w_scale)).
ir::Graph dynamic_matmul(const Pattern& p) {
  GraphBuilder b(13);
  b.input("x", {-1, kK}, {"seq", ""});
  b.weight("w_scale", p.w_scale, 3, 0.01f, 0.02f).weight("bias", {kN}, 4);
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  b.node("MatMulInteger", {"xq", "Wq", "xz", "wz"}, {"prod"});
  b.node("Mul", {"xs", "w_scale"}, {"scale"});
  b.node("Cast", {"prod"}, {"prod_f"}, {{"to", cast_to(p.cast_to)}});
  b.node("Mul", {"prod_f", "scale"}, {p.bias ? "mm" : "y"});
  if (p.bias) b.node("Add", {"mm", "bias"}, {"y"});
  b.output("y");
  if (p.cast_read_twice) b.node("Neg", {"prod_f"}, {"z"}).output("z");
  ir::Graph g = b.graph();
  Tensor w = Tensor::empty(DType::I8, Shape{kK, kN});
  for (int64_t i = 0; i < w.numel(); ++i) w.data_as<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  g.initializers["Wq"] = w;
  Tensor wz = Tensor::zeros(DType::I8, p.w_scale);
  g.initializers["wz"] = wz;
  return g;
}

TEST(FuseMatMulInteger, FoldsCastScaleAndBias) {
  for (const Shape& scale : {Shape{kN}, Shape{}}) {
    for (bool bias : {true, false}) {
      const ir::Graph g = dynamic_matmul({.w_scale = scale, .bias = bias});
      int n = 0;
      const ir::Graph f = run_pass(passes::fuse_matmul_integer, g, &n);
      EXPECT_EQ(n, 1);
      const ir::Node* node = find_op(f, "MatMulIntegerToFloat");
      ASSERT_NE(node, nullptr);
      EXPECT_EQ(node->domain, "ai.ignis");
      EXPECT_EQ(node->inputs, bias ? (std::vector<std::string>{"xq", "Wq", "scale", "xz", "wz", "bias"})
                                   : (std::vector<std::string>{"xq", "Wq", "scale", "xz", "wz"}));
      EXPECT_EQ(count_ops(f, "Cast"), 0);
      EXPECT_EQ(count_ops(f, "MatMulInteger"), 0);
      EXPECT_EQ(f.opset("ai.ignis"), 1);
      // The fused kernel rounds exactly as the three ops do.
      EXPECT_EQ(optimized_vs_plain(g, random_inputs(g, {{9, kK}}, 5)), 0.0);
    }
  }
}

TEST(FuseMatMulInteger, LeavesOtherCastsScalesAndSharedValues) {
  EXPECT_EQ(count_ops(run_pass(passes::fuse_matmul_integer, dynamic_matmul({.cast_to = 11})),
                      "MatMulIntegerToFloat", "ai.ignis"),
            0);  // a cast to double
  EXPECT_EQ(count_ops(run_pass(passes::fuse_matmul_integer, dynamic_matmul({.w_scale = Shape{2, kN}})),
                      "MatMulIntegerToFloat", "ai.ignis"),
            0);  // the scale would widen the product
  const ir::Graph shared = dynamic_matmul({.cast_read_twice = true});
  EXPECT_EQ(count_ops(run_pass(passes::fuse_matmul_integer, shared), "MatMulIntegerToFloat", "ai.ignis"), 0);
  EXPECT_EQ(optimized_vs_plain(shared, random_inputs(shared, {{4, kK}}, 6)), 0.0);
}

}  // namespace
}  // namespace ignis::fuse_test
