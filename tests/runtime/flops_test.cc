// SPDX-License-Identifier: Apache-2.0
// The FLOP estimates bench and inspect report: the quantized convolutions count their
// multiply-adds from the weights (input 3) in either layout, QLinearMatMul from A's depth, and a
// node whose weight shape is unknown counts its outputs instead of reading a missing shape.
#include <gtest/gtest.h>

#include "runtime/plan.h"

namespace ignis::runtime {
namespace {

int64_t flops_of(const std::string& op, const std::vector<const ir::ValueType*>& inputs, const Shape& out) {
  ir::Node node;
  node.op_type = op;
  return estimate_flops(node, inputs, {ir::ValueType{DType::U8, out}});
}

TEST(Flops, QuantizedConvolutionsCountMultiplyAddsFromTheirWeights) {
  const ir::ValueType x{DType::U8, Shape({1, 16, 8, 8})}, scale{DType::F32, Shape({})};
  const ir::ValueType w{DType::I8, Shape({32, 16, 3, 3})};
  const std::vector<const ir::ValueType*> inputs = {&x, &scale, &scale, &w};
  // 32 x 8 x 8 outputs, each 16 x 3 x 3 multiply-adds.
  const int64_t want = 2 * (32 * 8 * 8) * (16 * 3 * 3);
  EXPECT_EQ(flops_of("QLinearConv", inputs, Shape({1, 32, 8, 8})), want);
  EXPECT_EQ(flops_of("QLinearConvNhwc", inputs, Shape({1, 8, 8, 32})), want);
}

TEST(Flops, QLinearMatMulCountsItsMultiplyAdds) {
  const ir::ValueType a{DType::U8, Shape({128, 384})}, scale{DType::F32, Shape({})};
  const std::vector<const ir::ValueType*> inputs = {&a, &scale, &scale};
  EXPECT_EQ(flops_of("QLinearMatMul", inputs, Shape({128, 1536})), 2 * 128 * 1536 * 384);
}

TEST(Flops, ConvolutionWithoutAWeightShapeCountsItsOutputs) {
  const ir::ValueType x{DType::U8, Shape({1, 16, 8, 8})}, scale{DType::F32, Shape({})};
  const std::vector<const ir::ValueType*> inputs = {&x, &scale, &scale, nullptr};
  EXPECT_EQ(flops_of("QLinearConv", inputs, Shape({1, 32, 8, 8})), 32 * 8 * 8);
}

}  // namespace
}  // namespace ignis::runtime
