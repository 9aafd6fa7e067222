// SPDX-License-Identifier: Apache-2.0
// Tests for the sequence and optional kernels on what the node suites leave out: uneven
// splits, negative positions, errors for positions, types and empty values, and strings
// passing through Identity. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/op_runner.h"

namespace ignis::testing {
namespace {

OpCall call(const std::string& op, std::vector<Tensor> inputs, int64_t opset = 18) {
  OpCall c;
  c.op_type = op;
  c.opset = opset;
  c.inputs = std::move(inputs);
  return c;
}

std::vector<float> floats(const Tensor& t) { return {t.data_as<float>(), t.data_as<float>() + t.numel()}; }

Tensor scalar_i64(int64_t v) { return make_tensor_i64(Shape{}, {v}); }

TEST(Sequence, SplitToSequenceByScalarLeavesAShortLastPart) {
  OpCall c = call("SplitToSequence", {make_tensor_f32({5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), scalar_i64(2)});
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& items = (*r)[0].as_sequence().items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(items[2].shape(), (Shape{1, 2}));
  EXPECT_EQ(floats(items[1]), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(floats(items[2]), (std::vector<float>{8, 9}));
}

TEST(Sequence, SplitAlongAnInnerAxisWithoutKeepdims) {
  OpCall c = call("SplitToSequence", {make_tensor_f32({2, 3}, {0, 1, 2, 3, 4, 5})});
  c.attrs.set("axis", attr_int(-1));
  c.attrs.set("keepdims", attr_int(0));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& items = (*r)[0].as_sequence().items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[1].shape(), (Shape{2}));
  EXPECT_EQ(floats(items[1]), (std::vector<float>{1, 4}));
}

TEST(Sequence, ConcatAndStackFromSequence) {
  Tensor seq = Tensor::sequence(DType::F32, {make_tensor_f32({1, 2}, {1, 2}), make_tensor_f32({2, 2}, {3, 4, 5, 6})});
  OpCall c = call("ConcatFromSequence", {seq});
  c.attrs.set("axis", attr_int(0));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(floats((*r)[0]), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // Stacking needs equal shapes; the error names the item.
  c.attrs.set("new_axis", attr_int(1));
  r = run_op(c);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("item 1"), std::string::npos) << r.error().message();

  Tensor same = Tensor::sequence(DType::F32, {make_tensor_f32({2}, {1, 2}), make_tensor_f32({2}, {3, 4})});
  c.inputs = {same};
  c.attrs.set("axis", attr_int(-1));  // stacked: the new last axis
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(floats((*r)[0]), (std::vector<float>{1, 3, 2, 4}));

  c.inputs = {Tensor::sequence(DType::F32, {})};
  r = run_op(c);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("empty sequence"), std::string::npos) << r.error().message();
}

TEST(Sequence, InsertAtNegativePositionAndRejectsBadOnes) {
  Tensor seq = Tensor::sequence(DType::F32, {make_tensor_f32({1}, {1}), make_tensor_f32({1}, {2})});
  auto r = run_op(call("SequenceInsert", {seq, make_tensor_f32({1}, {9}), scalar_i64(-1)}));
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& items = (*r)[0].as_sequence().items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(floats(items[1]), (std::vector<float>{9}));
  EXPECT_EQ(seq.as_sequence().items.size(), 2u);  // the input sequence is unchanged

  r = run_op(call("SequenceInsert", {seq, make_tensor_f32({1}, {9}), scalar_i64(3)}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("out of range"), std::string::npos) << r.error().message();

  r = run_op(call("SequenceInsert", {seq, make_tensor_i64({1}, {9})}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("int64"), std::string::npos) << r.error().message();

  r = run_op(call("SequenceErase", {Tensor::sequence(DType::F32, {})}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("empty sequence"), std::string::npos) << r.error().message();
}

TEST(Sequence, AtAndLength) {
  Tensor seq = Tensor::sequence(DType::F32, {make_tensor_f32({1}, {1}), make_tensor_f32({2}, {2, 3})});
  auto r = run_op(call("SequenceAt", {seq, scalar_i64(-1)}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(floats((*r)[0]), (std::vector<float>{2, 3}));
  r = run_op(call("SequenceAt", {seq, scalar_i64(2)}));
  ASSERT_FALSE(r);
  r = run_op(call("SequenceLength", {seq}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*(*r)[0].data_as<int64_t>(), 2);
}

TEST(Optional, EmptyOptionalHasNoElementToGet) {
  Tensor empty = Tensor::optional(Tensor(), DType::F32);
  auto r = run_op(call("OptionalHasElement", {empty}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_FALSE(*(*r)[0].data_as<bool>());
  r = run_op(call("OptionalGetElement", {empty}));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("empty"), std::string::npos) << r.error().message();

  Tensor full = Tensor::optional(make_tensor_f32({2}, {7, 8}));
  r = run_op(call("OptionalGetElement", {full}));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(floats((*r)[0]), (std::vector<float>{7, 8}));
}

TEST(Strings, IdentityCopiesAndOtherOpsRefuse) {
  Tensor s = Tensor::empty(DType::String, {2});
  s.data_as<std::string>()[0] = "ab";
  s.data_as<std::string>()[1] = std::string("\0z", 2);
  auto r = run_op(call("Identity", {s}, 16));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::String);
  EXPECT_EQ((*r)[0].data_as<std::string>()[1], std::string("\0z", 2));
  EXPECT_NE((*r)[0].data(), s.data());  // a copy, not the caller's buffer

  r = run_op(call("Relu", {s}, 14));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::Unsupported);
}

}  // namespace
}  // namespace ignis::testing
