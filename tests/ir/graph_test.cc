// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

Node make_node(std::string name, std::string op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

Graph diamond() {
  // x -> a -> {b, c} -> d, listed out of order.
  Graph g;
  g.inputs.push_back({"x", DType::F32, {2}, {""}, true});
  g.nodes.push_back(make_node("d", "Add", {"b", "c"}, {"y"}));
  g.nodes.push_back(make_node("b", "Relu", {"a"}, {"b"}));
  g.nodes.push_back(make_node("a", "Relu", {"x"}, {"a"}));
  g.nodes.push_back(make_node("c", "Neg", {"a"}, {"c"}));
  g.outputs.push_back({"y", DType::F32, {}, {}, false});
  return g;
}

TEST(TopologicalOrder, ProducersComeBeforeConsumers) {
  Graph g = diamond();
  auto order = topological_order(g);
  ASSERT_TRUE(order) << order.error().to_string();
  ASSERT_EQ(order->size(), 4u);
  auto pos = [&](const char* name) {
    for (size_t i = 0; i < order->size(); ++i)
      if (g.nodes[(*order)[i]].name == name) return static_cast<int>(i);
    return -1;
  };
  EXPECT_LT(pos("a"), pos("b"));
  EXPECT_LT(pos("a"), pos("c"));
  EXPECT_LT(pos("b"), pos("d"));
  EXPECT_LT(pos("c"), pos("d"));
}

TEST(TopologicalOrder, KeepsAValidModelOrder) {
  Graph g;
  g.inputs.push_back({"x", DType::F32, {2}, {""}, true});
  g.nodes.push_back(make_node("n0", "Relu", {"x"}, {"a"}));
  g.nodes.push_back(make_node("n1", "Relu", {"x"}, {"b"}));
  g.nodes.push_back(make_node("n2", "Add", {"a", "b"}, {"y"}));
  auto order = topological_order(g);
  ASSERT_TRUE(order);
  EXPECT_EQ(*order, (std::vector<int>{0, 1, 2}));
}

TEST(Verify, RejectsTwoProducersOfOneValue) {
  Graph g = diamond();
  g.nodes.push_back(make_node("dup", "Relu", {"x"}, {"a"}));
  Status s = verify(g);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("'a'"), std::string::npos) << s.message();
}

TEST(Verify, RejectsAnOutputNobodyProduces) {
  Graph g = diamond();
  g.outputs.push_back({"ghost", DType::F32, {}, {}, false});
  Status s = verify(g);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("'ghost'"), std::string::npos) << s.message();
}

TEST(Verify, AcceptsOmittedOptionalInputs) {
  Graph g;
  g.inputs.push_back({"x", DType::F32, {2}, {""}, true});
  g.nodes.push_back(make_node("clip", "Clip", {"x", "", ""}, {"y"}));
  g.outputs.push_back({"y", DType::F32, {}, {}, false});
  EXPECT_TRUE(verify(g));
}

// Shape inference through the schema registry, as the planner calls it.
Result<std::vector<ValueType>> infer(const char* op, int64_t opset, const AttrMap& attrs,
                                     const std::vector<ValueType>& inputs, std::vector<const Tensor*> values,
                                     int outputs = 1) {
  const OpSchema* schema = OpSchemaRegistry::global().find("", op, opset);
  if (!schema) return unsupported("no schema");
  std::vector<const ValueType*> ptrs;
  for (const auto& t : inputs) ptrs.push_back(&t);
  values.resize(inputs.size(), nullptr);
  InferContext ctx("n", op, opset, attrs, ptrs, values, outputs);
  IGNIS_RETURN_IF_ERROR(schema->infer(ctx));
  return ctx.outputs();
}

TEST(ShapeInference, BroadcastingAdd) {
  auto out = infer("Add", 17, {}, {{DType::F32, {4, 1, 3}}, {DType::F32, {5, 1}}}, {});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape, (Shape{4, 5, 3}));
  auto bad = infer("Add", 17, {}, {{DType::F32, {4, 3}}, {DType::F32, {5}}}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::InvalidArgument);
}

TEST(ShapeInference, ReshapeNeedsItsTargetValue) {
  auto unknown = infer("Reshape", 17, {}, {{DType::F32, {2, 6}}, {DType::I64, {2}}}, {});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), StatusCode::ValueRequired);

  Tensor target = Tensor::empty(DType::I64, {2});
  target.data_as<int64_t>()[0] = 0;  // 0 copies the input dim
  target.data_as<int64_t>()[1] = -1;
  auto known = infer("Reshape", 17, {}, {{DType::F32, {2, 6}}, {DType::I64, {2}}}, {nullptr, &target});
  ASSERT_TRUE(known) << known.error().to_string();
  EXPECT_EQ((*known)[0].shape, (Shape{2, 6}));
}

TEST(ShapeInference, ConvOutputSize) {
  AttrMap attrs;
  Attribute pads;
  pads.kind = Attribute::Kind::Ints;
  pads.ints = {1, 1, 1, 1};
  attrs.set("pads", pads);
  Attribute strides;
  strides.kind = Attribute::Kind::Ints;
  strides.ints = {2, 2};
  attrs.set("strides", strides);
  auto out = infer("Conv", 17, attrs, {{DType::F32, {1, 3, 224, 224}}, {DType::F32, {64, 3, 3, 3}}}, {});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape, (Shape{1, 64, 112, 112}));  // floor((224 + 2 - 3) / 2) + 1
  auto wrong_channels = infer("Conv", 17, attrs, {{DType::F32, {1, 4, 224, 224}}, {DType::F32, {64, 3, 3, 3}}}, {});
  EXPECT_FALSE(wrong_channels);
}

}  // namespace
}  // namespace ignis::ir
