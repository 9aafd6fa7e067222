// SPDX-License-Identifier: Apache-2.0
// The names control-flow bodies read from enclosing scopes.
#include <gtest/gtest.h>

#include <memory>

#include "ir/graph.h"

namespace ignis::ir {
namespace {

Node node(std::string op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = op + "_" + out.at(0);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

ValueInfo value(std::string name) {
  ValueInfo v;
  v.name = std::move(name);
  return v;
}

Attribute graph_attr(Graph g) {
  Attribute a;
  a.kind = Attribute::Kind::Graph;
  a.graph = std::make_shared<const Graph>(std::move(g));
  return a;
}

TEST(OuterScopeNames, AreWhatABodyReadsWithoutDefining) {
  // body(i): t = Add(i, w_outer); u = Mul(t, init); out = [u, z_outer]
  Graph body;
  body.inputs.push_back(value("i"));
  body.initializers["init"] = Tensor::zeros(DType::F32, Shape{});
  body.nodes.push_back(node("Add", {"i", "w_outer"}, {"t"}));
  body.nodes.push_back(node("Mul", {"t", "init"}, {"u"}));
  body.outputs = {value("u"), value("z_outer")};
  EXPECT_EQ(outer_scope_names(body), (std::vector<std::string>{"w_outer", "z_outer"}));
}

TEST(OuterScopeNames, IncludeWhatNestedBodiesReadFromFurtherOut) {
  // inner body reads "a" (defined by the middle body) and "far" (defined outside both).
  Graph inner;
  inner.nodes.push_back(node("Add", {"a", "far"}, {"r"}));
  inner.outputs = {value("r")};
  Node nested_if = node("If", {"cond"}, {"y"});
  nested_if.attrs.set("then_branch", graph_attr(inner));
  nested_if.attrs.set("else_branch", graph_attr(inner));
  EXPECT_EQ(outer_scope_names(nested_if.attrs), (std::vector<std::string>{"a", "far"}));
  // As the importer does: the outer-scope values follow the declared input.
  for (const auto& name : outer_scope_names(nested_if.attrs)) nested_if.inputs.push_back(name);
  EXPECT_EQ(declared_input_count(nested_if), 1u);

  Graph middle;
  middle.nodes.push_back(node("Relu", {"x_outer"}, {"a"}));
  middle.nodes.push_back(nested_if);
  middle.outputs = {value("y")};
  // "a" is defined inside the middle body; "cond" and "far" come from outside it.
  EXPECT_EQ(outer_scope_names(middle), (std::vector<std::string>{"cond", "far", "x_outer"}));
}

}  // namespace
}  // namespace ignis::ir
