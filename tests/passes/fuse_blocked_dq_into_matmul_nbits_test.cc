// SPDX-License-Identifier: Apache-2.0
// fuse_blocked_dq_into_matmul_nbits: MatMul(A, DequantizeLinear(W int4/uint4, scale, zp?, axis 0,
// block_size)) [+ Add(bias)] becomes com.microsoft.MatMulNBits with the same results as the
// unfused graph run on its own kernels; patterns MatMulNBits cannot take are left alone.
#include "core/low_bit.h"
#include "core/strings.h"
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr int64_t kK = 70, kN = 19;  // a short last block of 32; N off the 16-column groups

struct Pattern {
  DType wtype = DType::I4;
  bool zero_point = true;
  bool bias = false;
  int64_t block = 32;
  int64_t axis = 0;
  bool weight_is_input = false;  // W fed at run time instead of an initializer
};

// A 4-bit tensor of `shape` with values cycling through the type's range.
Tensor four_bit(DType t, const Shape& shape, int64_t step) {
  Tensor q = Tensor::empty(t, shape);
  const int64_t lo = t == DType::I4 ? -8 : 0;
  for (int64_t i = 0; i < q.numel(); ++i) q.data_as<uint8_t>()[i] = low_bit_int_from_int64(t, lo + (i * step) % 16);
  return q;
}

ir::Graph blocked_matmul(const Pattern& p) {
  GraphBuilder b(21);
  b.input("a", {-1, kK}, {"m", ""});
  if (p.weight_is_input) b.input("w", {kK, kN}, {}, p.wtype);
  const int64_t along = p.axis == 0 ? kK : kN, blocks = (along + p.block - 1) / p.block;
  const Shape scale_shape = p.axis == 0 ? Shape{blocks, kN} : Shape{kK, blocks};
  b.weight("scale", scale_shape, 7, 0.01f, 0.1f).weight("bias", {kN}, 8);
  std::vector<std::string> dq = {"w", "scale"};
  if (p.zero_point) dq.push_back("zp");
  b.node("DequantizeLinear", dq, {"wf"}, {{"axis", int_attr(p.axis)}, {"block_size", int_attr(p.block)}});
  b.node("MatMul", {"a", "wf"}, {p.bias ? "mm" : "y"});
  if (p.bias) b.node("Add", {"mm", "bias"}, {"y"});
  b.output("y");
  ir::Graph g = b.graph();
  if (!p.weight_is_input) g.initializers["w"] = four_bit(p.wtype, Shape{kK, kN}, 5);
  if (p.zero_point) g.initializers["zp"] = four_bit(p.wtype, scale_shape, 3);
  return g;
}

TEST(FuseBlockedDqIntoMatMulNBits, PacksInt4AndUint4WeightsAndFoldsTheBias) {
  for (DType t : {DType::I4, DType::U4}) {
    for (bool zp : {true, false}) {
      for (bool bias : {false, true}) {
        SCOPED_TRACE(str_cat(dtype_name(t), zp ? " zero point" : "", bias ? " bias" : ""));
        const ir::Graph g = blocked_matmul({.wtype = t, .zero_point = zp, .bias = bias});
        int n = 0;
        const ir::Graph f = run_pass(passes::fuse_blocked_dq_into_matmul_nbits, g, &n);
        EXPECT_EQ(n, 1);
        const ir::Node* node = find_op(f, "MatMulNBits", "com.microsoft");
        ASSERT_NE(node, nullptr);
        EXPECT_EQ(node->attrs.get_int("K", 0), kK);
        EXPECT_EQ(node->attrs.get_int("N", 0), kN);
        EXPECT_EQ(node->attrs.get_int("accuracy_level", -1), 0);
        // int4 without a zero point uses MatMulNBits' default of 8; uint4's 0 must be written.
        const bool zp_written = zp || t == DType::U4;
        EXPECT_EQ(node->inputs.size() > 3 && !node->inputs[3].empty(), zp_written);
        EXPECT_EQ(node->inputs.size() == 6, bias);
        EXPECT_EQ(count_ops(f, "MatMul"), 0);
        EXPECT_EQ(count_ops(f, "Add"), 0);
        EXPECT_EQ(f.opset("com.microsoft"), 1);
        // One row takes the kernel's register path, five the GEMM path; float sums in another
        // order, |W| <= 15 * 0.1 over K = 70.
        EXPECT_LT(optimized_vs_plain(g, random_inputs(g, {{1, kK}}, 3)), 1e-4);
        EXPECT_LT(optimized_vs_plain(g, random_inputs(g, {{5, kK}}, 4)), 1e-4);
      }
    }
  }
}

TEST(FuseBlockedDqIntoMatMulNBits, LeavesWhatMatMulNBitsCannotTake) {
  const auto fused = [](const Pattern& p) {
    return count_ops(run_pass(passes::fuse_blocked_dq_into_matmul_nbits, blocked_matmul(p)), "MatMulNBits",
                     "com.microsoft");
  };
  EXPECT_EQ(fused({}), 1);
  EXPECT_EQ(fused({.block = 24}), 0);             // not a power of two
  EXPECT_EQ(fused({.block = 8}), 0);              // below 16
  EXPECT_EQ(fused({.block = 16, .axis = 1}), 0);  // blocks along N
  EXPECT_EQ(fused({.weight_is_input = true}), 0);
  const ir::Graph g = blocked_matmul({.block = 16, .axis = 1});
  EXPECT_LT(optimized_vs_plain(g, random_inputs(g, {{3, kK}}, 5)), 1e-4);
}

}  // namespace
}  // namespace ignis::fuse_test
