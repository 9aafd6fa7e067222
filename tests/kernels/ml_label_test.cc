// SPDX-License-Identifier: Apache-2.0
// Tests for LabelEncoder (versions 1, 2 and 4) and ZipMap: default values of every kind, NaN
// and duplicate keys, tensor attributes, and the errors malformed tables get. Expected values
// come from onnxruntime 1.32 run on the same nodes, or from the spec's defaults where
// onnxruntime has no kernel (int32 and double values).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

OpCall label_encoder(int64_t opset, Tensor x) {
  OpCall c;
  c.op_type = "LabelEncoder";
  c.domain = kMl;
  c.opset = opset;
  c.inputs = {std::move(x)};
  return c;
}

TEST(LabelEncoder, DefaultsOfVersion2ByValueType) {
  OpCall c = label_encoder(2, make_tensor_str({2}, {"b", "z"}));
  c.attrs.set("keys_strings", attr_strings({"a", "b"}));
  c.attrs.set("values_int64s", attr_ints({1, 2}));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{2, -1}));

  OpCall f = label_encoder(2, make_tensor_str({2}, {"b", "z"}));
  f.attrs.set("keys_strings", attr_strings({"a", "b"}));
  f.attrs.set("values_floats", attr_floats({0.5f, 1.5f}));
  r = run_op(f);
  ASSERT_TRUE(r) << r.error().to_string();
  const std::vector<float> v = values_of<float>((*r)[0]);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_TRUE(v[1] == 0.0f && std::signbit(v[1])) << v[1];  // -0.0
  f.attrs.set("default_float", attr_float(7.5f));
  r = run_op(f);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0])[1], 7.5f);

  OpCall s = label_encoder(2, make_tensor_i64({3}, {1, 2, 3}));
  s.attrs.set("keys_int64s", attr_ints({1, 2}));
  s.attrs.set("values_strings", attr_strings({"a", "b"}));
  r = run_op(s);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<std::string>((*r)[0]), (std::vector<std::string>{"a", "b", "_Unused"}));
}

TEST(LabelEncoder, Version1MapsStringsToIndicesAndBack) {
  OpCall c = label_encoder(1, make_tensor_str({2}, {"b", "z"}));
  c.attrs.set("classes_strings", attr_strings({"a", "b"}));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, -1}));

  // Indices out of range, negative ones included, get default_string.
  c.inputs = {make_tensor_i64({3}, {1, 5, -1})};
  c.attrs.set("default_string", attr_string("zz"));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<std::string>((*r)[0]), (std::vector<std::string>{"b", "zz", "zz"}));
}

TEST(LabelEncoder, NanKeysMatchFromVersion4AndTheFirstDuplicateWins) {
  for (int64_t opset : {2, 4}) {
    OpCall c = label_encoder(opset, make_tensor_f32({5}, {1.0f, kNan, 0.0f, -0.0f, 5.0f}));
    c.attrs.set("keys_floats", attr_floats({1.0f, kNan, -0.0f}));
    c.attrs.set("values_int64s", attr_ints({1, 2, 3}));
    auto r = run_op(c);
    ASSERT_TRUE(r) << r.error().to_string();
    const int64_t nan_value = opset >= 4 ? 2 : -1;
    EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{1, nan_value, 3, 3, -1})) << "opset " << opset;
  }
  OpCall d = label_encoder(2, make_tensor_str({1}, {"a"}));
  d.attrs.set("keys_strings", attr_strings({"a", "b", "a"}));
  d.attrs.set("values_strings", attr_strings({"x", "y", "w"}));
  auto r = run_op(d);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<std::string>((*r)[0]), (std::vector<std::string>{"x"}));
}

TEST(LabelEncoder, Version4TensorAttributesAndTheirDefaults) {
  OpCall c = label_encoder(4, make_tensor_str({2, 1}, {"a", "z"}));
  c.attrs.set("keys_tensor", attr_tensor(make_tensor_str({2}, {"a", "b"})));
  c.attrs.set("values_tensor", attr_tensor(make_tensor<double>({2}, {1.5, 2.5})));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::F64);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 1}));
  const std::vector<double> d = values_of<double>((*r)[0]);
  EXPECT_EQ(d[0], 1.5);
  EXPECT_TRUE(d[1] == 0.0 && std::signbit(d[1])) << d[1];

  c.attrs.set("values_tensor", attr_tensor(make_tensor<int32_t>({2}, {10, 20})));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), (std::vector<int32_t>{10, -1}));

  c.attrs.set("default_tensor", attr_tensor(make_tensor<int32_t>({1}, {42})));
  r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int32_t>((*r)[0]), (std::vector<int32_t>{10, 42}));

  c.attrs.set("default_tensor", attr_tensor(make_tensor_i64({1}, {42})));
  expect_op_error(c, "'default_tensor' must hold one int32 value");
}

TEST(LabelEncoder, MalformedTablesNameTheirAttributes) {
  OpCall c = label_encoder(2, make_tensor_str({1}, {"a"}));
  c.attrs.set("keys_strings", attr_strings({"a", "b"}));
  c.attrs.set("values_int64s", attr_ints({1}));
  EXPECT_EQ(expect_op_error(c, "'keys_strings' (2 entries) and 'values_int64s' (1 entries)"),
            StatusCode::InvalidArgument);

  c.attrs.set("values_int64s", attr_ints({1, 2}));
  c.attrs.set("values_floats", attr_floats({1, 2}));
  expect_op_error(c, "got 'values_int64s', 'values_floats'");

  OpCall k = label_encoder(2, make_tensor_i64({1}, {1}));
  k.attrs.set("keys_strings", attr_strings({"a"}));
  k.attrs.set("values_int64s", attr_ints({1}));
  expect_op_error(k, "input 0 is int64 but the keys are string");
}

OpCall zipmap(Tensor x) {
  OpCall c;
  c.op_type = "ZipMap";
  c.domain = kMl;
  c.opset = 1;
  c.inputs = {std::move(x)};
  return c;
}

TEST(ZipMap, OneMapPerRowSharingTheLabels) {
  OpCall c = zipmap(make_tensor_f32({2, 3}, {0.1f, 0.2f, 0.7f, 1, 0, 0}));
  c.attrs.set("classlabels_int64s", attr_ints({5, 7, 9}));
  auto r = run_op(c);
  ASSERT_TRUE(r) << r.error().to_string();
  const TensorSequence& seq = (*r)[0].as_sequence();
  EXPECT_EQ(seq.element, DType::Map);
  ASSERT_EQ(seq.items.size(), 2u);
  const TensorMap& m1 = seq.items[1].as_map();
  EXPECT_EQ(values_of<int64_t>(m1.keys), (std::vector<int64_t>{5, 7, 9}));
  EXPECT_EQ(values_of<float>(m1.values), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(seq.items[0].as_map().keys.data(), m1.keys.data());

  OpCall s = zipmap(make_tensor_f32({2}, {0.25f, 0.75f}));
  s.attrs.set("classlabels_strings", attr_strings({"no", "yes"}));
  r = run_op(s);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& items = (*r)[0].as_sequence().items;
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(values_of<std::string>(items[0].as_map().keys), (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(values_of<float>(items[0].as_map().values), (std::vector<float>{0.25f, 0.75f}));

  c.inputs = {make_tensor_f32({1, 2}, {0.5f, 0.5f})};
  expect_op_error(c, "has 2 scores per row for 3 class labels");
}

}  // namespace
}  // namespace ignis::nn_test
