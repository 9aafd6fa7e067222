// SPDX-License-Identifier: Apache-2.0
// com.microsoft QLinearAdd's schema: the errors it gives for malformed nodes (inputs missing or
// of the wrong type, shapes that do not broadcast, scales per channel), and that the optional
// zero points may be left out. Values are checked elsewhere: the x86 kernel against the
// reference in the consistency test, both against onnxruntime in
// tests/python/test_quantize_static_residual.py.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

Tensor bytes(DType t, const Shape& shape, uint8_t v) {
  Tensor out = Tensor::empty(t, shape);
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<uint8_t*>(out.data())[i] = v;
  return out;
}

Tensor scalar(float v) { return make_tensor_f32(Shape{}, {v}); }

OpCall qlinear_add(DType t, const Shape& a, const Shape& b) {
  OpCall call;
  call.domain = "com.microsoft";
  call.op_type = "QLinearAdd";
  call.opset = 1;
  call.inputs = {bytes(t, a, 9),         scalar(0.1f), bytes(t, {}, 1), bytes(t, b, 4),
                 scalar(0.2f),           bytes(t, {}, 2), scalar(0.3f), bytes(t, {}, 3)};
  return call;
}

TEST(QLinearAddSchema, AcceptsBroadcastAndOmittedZeroPoints) {
  EXPECT_EQ(status_of(qlinear_add(DType::U8, {2, 3}, {3})), StatusCode::Ok);
  OpCall call = qlinear_add(DType::I8, {2, 3}, {2, 3});
  call.inputs[2] = Tensor();
  call.inputs[5] = Tensor();
  call.inputs.pop_back();
  EXPECT_EQ(status_of(call), StatusCode::Ok);
}

TEST(QLinearAddSchema, RejectsMalformedNodes) {
  EXPECT_EQ(status_of(qlinear_add(DType::U8, {2, 3}, {4})), StatusCode::InvalidArgument) << "no broadcast";
  OpCall mixed = qlinear_add(DType::U8, {2, 3}, {2, 3});
  mixed.inputs[3] = bytes(DType::I8, {2, 3}, 4);
  EXPECT_EQ(status_of(mixed), StatusCode::InvalidArgument) << "A uint8, B int8";
  OpCall zero_point = qlinear_add(DType::U8, {2, 3}, {2, 3});
  zero_point.inputs[7] = bytes(DType::I8, {}, 3);
  EXPECT_EQ(status_of(zero_point), StatusCode::InvalidArgument) << "C's zero point of another type";
  OpCall short_call = qlinear_add(DType::U8, {2, 3}, {2, 3});
  short_call.inputs.resize(6);
  EXPECT_EQ(status_of(short_call), StatusCode::InvalidArgument) << "no C scale";
  OpCall no_scale = qlinear_add(DType::U8, {2, 3}, {2, 3});
  no_scale.inputs[4] = Tensor();
  EXPECT_EQ(status_of(no_scale), StatusCode::InvalidArgument) << "B's scale omitted";
  OpCall per_channel = qlinear_add(DType::U8, {2, 3}, {2, 3});
  per_channel.inputs[1] = make_tensor_f32(Shape{3}, {0.1f, 0.2f, 0.3f});
  EXPECT_EQ(status_of(per_channel), StatusCode::Unsupported) << "per-channel scale";
  OpCall f32 = qlinear_add(DType::U8, {2, 3}, {2, 3});
  f32.inputs[0] = make_tensor_f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(status_of(f32), StatusCode::Ok) << "float A";
}

}  // namespace
}  // namespace ignis::nn_test
