// SPDX-License-Identifier: Apache-2.0
// inline_constant_if: an If on a constant condition becomes the nodes of the branch it takes.
#include "ir/outer_scope.h"
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const ir::Node* producer_of(const ir::Graph& g, const std::string& value) {
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (o == value) return &n;
  return nullptr;
}

// Feeds for a [2, 3] input "x" with every element `sign` * (1..6) / 4.
NamedTensors signed_x(float sign) {
  Tensor t = Tensor::empty(DType::F32, Shape{2, 3});
  for (int64_t i = 0; i < 6; ++i) t.data_as<float>()[i] = sign * static_cast<float>(i + 1) / 4.0f;
  return {{"x", t}};
}

// z = Neg(If(cond) then Add(x, half) else Mul(x, x)); `half` is the then branch's initializer.
GraphBuilder add_or_mul(bool cond) {
  GraphBuilder then_b, else_b;
  then_b.scalar("half", 0.5f).node("Add", {"x", "half"}, {"t"}).output("t");
  else_b.node("Mul", {"x", "x"}, {"e"}).output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).bool_scalar("cond", cond);
  b.node("If", {"cond"}, {"y"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.node("Neg", {"y"}, {"z"}).output("z");
  return b;
}

TEST(InlineConstantIf, ReplacesTheIfByTheBranchItTakes) {
  for (bool cond : {true, false}) {
    const GraphBuilder b = add_or_mul(cond);
    int n = 0;
    const ir::Graph g = run_pass(passes::inline_constant_if, b.graph(), &n);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(count_ops(g, "If"), 0);
    const ir::Node* y = producer_of(g, "y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->op_type, cond ? "Add" : "Mul");
    if (cond) {
      EXPECT_TRUE(g.initializers.count(y->inputs[1]));  // the branch's constant came along
    }
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 1)), 1e-6);
  }
}

TEST(InlineConstantIf, CopiesAnOuterValueTheBranchReturnsThroughIdentity) {
  // then: returns x itself; the If's output is the graph's.
  GraphBuilder then_b, else_b;
  then_b.output("x");
  else_b.node("Neg", {"x"}, {"e"}).output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).bool_scalar("cond", true);
  b.node("If", {"cond"}, {"y"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.output("y");
  const ir::Graph g = run_pass(passes::inline_constant_if, b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Identity");
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 2)), 1e-6);
}

TEST(InlineConstantIf, CopiesABranchInitializerOrARepeatedOutputThroughIdentity) {
  // then: (k, r, r) with k the branch's initializer and r = Relu(x).
  GraphBuilder then_b, else_b;
  then_b.weight("k", {2, 3}, 5).node("Relu", {"x"}, {"r"}).output("k").output("r").output("r");
  else_b.node("Neg", {"x"}, {"e"}).output("e").output("e").output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).bool_scalar("cond", true);
  b.node("If", {"cond"}, {"y1", "y2", "y3"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.output("y1").output("y2").output("y3");
  const ir::Graph g = run_pass(passes::inline_constant_if, b.graph());
  EXPECT_EQ(count_ops(g, "Identity"), 2);
  ASSERT_NE(producer_of(g, "y2"), nullptr);
  EXPECT_EQ(producer_of(g, "y2")->op_type, "Relu");
  ASSERT_NE(producer_of(g, "y1"), nullptr);
  EXPECT_TRUE(g.initializers.count(producer_of(g, "y1")->inputs[0]));
  EXPECT_EQ(producer_of(g, "y3")->inputs, std::vector<std::string>{"y2"});
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 3)), 1e-6);
}

TEST(InlineConstantIf, RenamesBranchValuesThatClashWithOuterNames) {
  // The outer graph and the branch both define "t".
  GraphBuilder then_b, else_b;
  then_b.node("Neg", {"x"}, {"t"}).node("Mul", {"t", "x"}, {"u"}).output("u");
  else_b.node("Neg", {"x"}, {"e"}).output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).bool_scalar("cond", true);
  b.node("Sigmoid", {"x"}, {"t"});
  b.node("If", {"cond"}, {"y"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.node("Add", {"y", "t"}, {"z"}).output("z");
  const ir::Graph g = run_pass(passes::inline_constant_if, b.graph());
  EXPECT_EQ(producer_of(g, "t")->op_type, "Sigmoid");
  ASSERT_NE(producer_of(g, "t_1"), nullptr);
  EXPECT_EQ(producer_of(g, "t_1")->op_type, "Neg");
  EXPECT_EQ(producer_of(g, "y")->inputs, (std::vector<std::string>{"t_1", "x"}));
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 4)), 1e-6);
}

TEST(InlineConstantIf, NestedBodiesReadTheRenamedValues) {
  // The taken branch defines "t" (renamed: the outer graph has one) and holds an If on a
  // run-time condition whose branches read "t".
  GraphBuilder inner_then, inner_else;
  inner_then.node("Relu", {"t"}, {"p"}).output("p");
  inner_else.node("Sigmoid", {"t"}, {"q"}).output("q");
  GraphBuilder then_b, else_b;
  then_b.node("Neg", {"x"}, {"t"});
  then_b.node("If", {"positive"}, {"v"}, {{"then_branch", graph_attr(inner_then)}, {"else_branch", graph_attr(inner_else)}});
  then_b.output("v");
  else_b.node("Neg", {"x"}, {"e"}).output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).bool_scalar("cond", true).scalar("zero", 0.0f);
  b.node("Sigmoid", {"x"}, {"t"});
  b.node("ReduceSum", {"x"}, {"sum"}, {{"keepdims", int_attr(0)}});
  b.node("Less", {"sum", "zero"}, {"positive"});  // true when x is negative: then Neg(x) > 0
  b.node("If", {"cond"}, {"y"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.node("Add", {"y", "t"}, {"z"}).output("z");
  const ir::Graph g = run_pass(passes::inline_constant_if, b.graph());
  const ir::Node* nested = producer_of(g, "y");
  ASSERT_NE(nested, nullptr);
  ASSERT_EQ(nested->op_type, "If");
  // Its captured input and what its branches read are the renamed value.
  EXPECT_EQ(ir::outer_scope_names(nested->attrs), std::vector<std::string>{"t_1"});
  EXPECT_EQ(nested->inputs, (std::vector<std::string>{"positive", "t_1"}));
  EXPECT_EQ(producer_of(g, "t_1")->op_type, "Neg");
  for (float sign : {1.0f, -1.0f}) EXPECT_LT(optimized_vs_plain(b.graph(), signed_x(sign)), 1e-6);
}

TEST(InlineConstantIf, InlinesAConditionTheGraphFolds) {
  GraphBuilder then_b, else_b;
  then_b.node("Relu", {"x"}, {"r"}).output("r");
  else_b.node("Neg", {"x"}, {"e"}).output("e");
  GraphBuilder b;
  b.input("x", {2, 3}).scalar("three", 3.0f).scalar("two", 2.0f);
  b.node("Greater", {"three", "two"}, {"cond"});
  b.node("If", {"cond"}, {"y"}, {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}});
  b.output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_TRUE(g.initializers.empty());
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 5), OptLevel::Basic), 1e-6);
}

TEST(InlineConstantIf, LeavesRunTimeAndMalformedConditionsAlone) {
  GraphBuilder then_b, else_b;
  then_b.node("Relu", {"x"}, {"r"}).output("r");
  else_b.node("Neg", {"x"}, {"e"}).output("e");
  const auto branches = std::vector<std::pair<std::string, Attribute>>{{"then_branch", graph_attr(then_b)},
                                                                       {"else_branch", graph_attr(else_b)}};
  GraphBuilder run_time;
  run_time.input("x", {2, 3}).input("cond", {}, {}, DType::Bool).node("If", {"cond"}, {"y"}, branches).output("y");
  GraphBuilder float_cond;  // the runtime reports a non-bool condition
  float_cond.input("x", {2, 3}).scalar("cond", 1.0f).node("If", {"cond"}, {"y"}, branches).output("y");
  for (const GraphBuilder* b : {&run_time, &float_cond}) {
    int n = -1;
    const ir::Graph g = run_pass(passes::inline_constant_if, b->graph(), &n);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(count_ops(g, "If"), 1);
  }
}

}  // namespace
}  // namespace ignis::fuse_test
