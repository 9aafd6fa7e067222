// SPDX-License-Identifier: Apache-2.0
// The names control-flow bodies read from enclosing scopes.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/outer_scope.h"
#include "testing/graph_attr.h"

namespace ignis::ir {
namespace {

using testing::graph_attr;

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

// A node of `op` with `body` as its attribute `attr`; its captured inputs follow `in`.
Node with_body(std::string op, std::vector<std::string> in, std::vector<std::string> out, const std::string& attr,
               Graph body) {
  Node n = node(std::move(op), std::move(in), std::move(out));
  n.attrs.set(attr, graph_attr(std::move(body)));
  for (const auto& name : outer_scope_names(n.attrs)) n.inputs.push_back(name);
  return n;
}

const Graph& body_of(const Node& n, const std::string& attr) { return *n.attrs.get_graph(attr); }

TEST(SyncOuterReads, MakesBodiesReadACapturedInputARewriteRenamed) {
  // outer: Loop-like node whose body reads "a" directly and through a nested If.
  Graph inner;
  inner.nodes.push_back(node("Neg", {"a"}, {"n"}));
  inner.outputs = {value("n")};
  Graph body;
  body.inputs.push_back(value("h"));
  body.nodes.push_back(node("Add", {"h", "a"}, {"s"}));
  body.nodes.push_back(with_body("If", {"s"}, {"r"}, "then_branch", inner));
  body.outputs = {value("r")};
  Graph g;
  g.inputs = {value("x"), value("b")};
  g.nodes.push_back(with_body("Scan", {"x"}, {"y"}, "body", body));
  g.outputs = {value("y")};
  ASSERT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "a"}));
  g.nodes[0].inputs[1] = "b";  // as replace_uses would

  EXPECT_EQ(sync_outer_reads(g), 1);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "b"}));
  const Graph& new_body = body_of(g.nodes[0], "body");
  EXPECT_EQ(outer_scope_names(new_body), std::vector<std::string>{"b"});
  EXPECT_EQ(new_body.nodes[0].inputs, (std::vector<std::string>{"h", "b"}));
  EXPECT_EQ(new_body.nodes[1].inputs, (std::vector<std::string>{"s", "b"}));
  EXPECT_EQ(body_of(new_body.nodes[1], "then_branch").nodes[0].inputs, std::vector<std::string>{"b"});
  EXPECT_EQ(sync_outer_reads(g), 0);  // in step now
}

TEST(SyncOuterReads, GoesThroughAFreshNameWhereTheBodyDefinesTheNewOne) {
  // The body reads "a" from outside and defines its own "b"; the node now passes "b".
  Graph body;
  body.nodes.push_back(node("Neg", {"a"}, {"b"}));
  body.nodes.push_back(node("Add", {"a", "b"}, {"r"}));
  body.outputs = {value("r")};
  Graph g;
  g.inputs = {value("b"), value("c")};
  g.nodes.push_back(with_body("If", {"c"}, {"y"}, "then_branch", body));
  g.outputs = {value("y")};
  g.nodes[0].inputs[1] = "b";

  EXPECT_EQ(sync_outer_reads(g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, "Identity");
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"b"});
  const std::string fresh = g.nodes[0].outputs.at(0);
  EXPECT_NE(fresh, "b");
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"c", fresh}));
  const Graph& new_body = body_of(g.nodes[1], "then_branch");
  EXPECT_EQ(new_body.nodes[0].inputs, std::vector<std::string>{fresh});
  EXPECT_EQ(new_body.nodes[1].inputs, (std::vector<std::string>{fresh, "b"}));  // its own b stays
  EXPECT_TRUE(verify(g));
}

}  // namespace
}  // namespace ignis::ir
