// SPDX-License-Identifier: Apache-2.0
// eliminate_common_subexpressions: duplicate nodes and identical initializers merge; random
// ops, other domains, differing attributes or input orders, and graph outputs are respected.
#include "passes/fuse_test_util.h"
#include "passes/reference_runner.h"
#include "passes/pass.h"

namespace ignis::fuse_test {
namespace {

using reference_runner::max_difference;

const std::vector<std::vector<int64_t>> kShape = {{2, 3, 4}};

GraphBuilder with_input() {
  GraphBuilder b;
  b.input("x", {-1, 3, 4}, {"batch", "", ""});
  return b;
}

ir::Graph cse(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::eliminate_common_subexpressions, b.graph(), rewrites);
}

TEST(EliminateCommonSubexpressions, MergesDuplicateNodesAndTheirReaders) {
  // Two identical Relu -> Exp chains: the Exps become duplicates once the Relus merge.
  GraphBuilder b = with_input();
  b.node("Relu", {"x"}, {"r1"}).node("Relu", {"x"}, {"r2"});
  b.node("Exp", {"r1"}, {"e1"}).node("Exp", {"r2"}, {"e2"});
  b.node("Sub", {"e1", "e2"}, {"d"}).node("Add", {"d", "r2"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = cse(b, &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(count_ops(g, "Relu"), 1);
  EXPECT_EQ(count_ops(g, "Exp"), 1);
  const ir::Node* sub = find_op(g, "Sub", "");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->inputs, (std::vector<std::string>{"e1", "e1"}));
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 1)), 0.0);
}

TEST(EliminateCommonSubexpressions, MapsEveryOutputOfAMultiOutputNode) {
  GraphBuilder b = with_input();
  b.ints_constant("sizes", {1, 2});
  b.node("Split", {"x", "sizes"}, {"a1", "b1"}, {{"axis", int_attr(1)}});
  b.node("Split", {"x", "sizes"}, {"a2", "b2"}, {{"axis", int_attr(1)}});
  b.node("Concat", {"b2", "a2", "b1"}, {"y"}, {{"axis", int_attr(1)}}).output("y");
  const ir::Graph g = cse(b);
  EXPECT_EQ(count_ops(g, "Split"), 1);
  EXPECT_EQ(find_op(g, "Concat", "")->inputs, (std::vector<std::string>{"b1", "a1", "b1"}));
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 2)), 0.0);
}

TEST(EliminateCommonSubexpressions, KeepsNodesThatDifferInAttributesOrInputOrder) {
  GraphBuilder b = with_input();
  b.input("w", {-1, 3, 4}, {"batch", "", ""});
  b.node("LeakyRelu", {"x"}, {"l1"}, {{"alpha", float_attr(0.1f)}});
  b.node("LeakyRelu", {"x"}, {"l2"}, {{"alpha", float_attr(0.2f)}});
  b.node("LeakyRelu", {"x"}, {"l3"});
  b.node("Sub", {"x", "w"}, {"s1"}).node("Sub", {"w", "x"}, {"s2"});
  b.node("Transpose", {"x"}, {"t1"}, {{"perm", ints({0, 2, 1})}});
  b.node("Transpose", {"x"}, {"t2"}, {{"perm", ints({1, 2, 0})}});
  b.node("Sum", {"l1", "l2", "l3", "s1", "s2"}, {"y"}).output("y").output("t1").output("t2");
  int n = -1;
  const ir::Graph g = cse(b, &n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(g.nodes.size(), b.graph().nodes.size());
}

TEST(EliminateCommonSubexpressions, LeavesRandomOpsDropoutAndOtherDomainsAlone) {
  GraphBuilder b = with_input();
  b.node("RandomNormalLike", {"x"}, {"n1"}).node("RandomNormalLike", {"x"}, {"n2"});
  b.node("Dropout", {"x"}, {"d1"}).node("Dropout", {"x"}, {"d2"});
  b.node("Mystery", {"x"}, {"m1"}).node("Mystery", {"x"}, {"m2"});
  ir::Graph in = b.graph();
  in.nodes[4].domain = in.nodes[5].domain = "com.example";
  in.opsets["com.example"] = 1;
  for (const char* o : {"n1", "n2", "d1", "d2", "m1", "m2"}) {
    ValueInfo v;
    v.name = o;
    in.outputs.push_back(v);
  }
  int n = -1;
  const ir::Graph g = run_pass(passes::eliminate_common_subexpressions, in, &n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(g.nodes.size(), 6u);
}

TEST(EliminateCommonSubexpressions, KeepsGraphOutputNamesThroughIdentity) {
  // The duplicate's output is a graph output: it becomes Identity of the first's output.
  GraphBuilder b = with_input();
  b.node("Sigmoid", {"x"}, {"s1"}).node("Sigmoid", {"x"}, {"y"});
  b.node("Neg", {"s1"}, {"z"}).output("y").output("z");
  const ir::Graph g = cse(b);
  EXPECT_EQ(count_ops(g, "Sigmoid"), 1);
  const ir::Node* id = find_op(g, "Identity", "");
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->inputs, std::vector<std::string>{"s1"});
  EXPECT_EQ(id->outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 3)), 0.0);
  // The first's output is the graph output: the duplicate's readers read it.
  GraphBuilder first = with_input();
  first.node("Sigmoid", {"x"}, {"y"}).node("Sigmoid", {"x"}, {"s2"}).node("Neg", {"s2"}, {"z"});
  first.output("y").output("z");
  const ir::Graph g2 = cse(first);
  EXPECT_EQ(count_ops(g2, "Sigmoid"), 1);
  EXPECT_EQ(count_ops(g2, "Identity"), 0);
  EXPECT_EQ(find_op(g2, "Neg", "")->inputs, std::vector<std::string>{"y"});
  // Identities already naming two outputs are left as they are (no rewrite, no churn).
  GraphBuilder ids = with_input();
  ids.node("Identity", {"x"}, {"y"}).node("Identity", {"x"}, {"z"}).output("y").output("z");
  int n = -1;
  cse(ids, &n);
  EXPECT_EQ(n, 0);
}

TEST(EliminateCommonSubexpressions, MergesIdenticalInitializersOnly) {
  GraphBuilder b = with_input();
  b.weight("w1", {4, 5}, 7).weight("w2", {4, 5}, 7).weight("w3", {4, 5}, 8);
  b.weight("v1", {20}, 7);  // the same bytes as w1, another shape
  b.node("MatMul", {"x", "w1"}, {"m1"}).node("MatMul", {"x", "w2"}, {"m2"}).node("MatMul", {"x", "w3"}, {"m3"});
  b.node("Sum", {"m1", "m2", "m3"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = cse(b, &n);
  EXPECT_EQ(n, 2);  // w2 merged into w1, then the second MatMul into the first
  EXPECT_TRUE(g.initializers.count("w1") && g.initializers.count("w3") && g.initializers.count("v1"));
  EXPECT_FALSE(g.initializers.count("w2"));
  EXPECT_EQ(count_ops(g, "MatMul"), 2);
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 4)), 0.0);
}

TEST(EliminateCommonSubexpressions, KeepsAnInitializerThatIsAGraphOutput) {
  GraphBuilder b = with_input();
  b.weight("a", {4}, 3).weight("b", {4}, 3);
  b.node("Add", {"x", "b"}, {"y"}).output("y").output("b");
  int n = 0;
  const ir::Graph g = cse(b, &n);
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(g.initializers.count("b"));
  EXPECT_EQ(find_op(g, "Add", "")->inputs, (std::vector<std::string>{"x", "a"}));
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 5)), 0.0);
}

TEST(EliminateCommonSubexpressions, ShrinksTheGraphInThePipeline) {
  // Shape arithmetic written twice, as exporters do for each use.
  GraphBuilder b = with_input();
  b.int_scalar("zero", 0).ints_constant("axes", {0}).ints_constant("rest", {12});
  for (const char* k : {"1", "2"}) {
    const std::string s = k;
    b.node("Shape", {"x"}, {"shape" + s}).node("Gather", {"shape" + s, "zero"}, {"n" + s});
    b.node("Unsqueeze", {"n" + s, "axes"}, {"u" + s}).node("Concat", {"u" + s, "rest"}, {"target" + s}, {{"axis", int_attr(0)}});
    b.node("Reshape", {"x", "target" + s}, {"r" + s});
  }
  b.node("Add", {"r1", "r2"}, {"y"}).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  EXPECT_EQ(count_ops(g, "Shape"), 1);
  EXPECT_EQ(count_ops(g, "Reshape"), 1);
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), kShape, 6)), 0.0);
}

TEST(EliminateCommonSubexpressions, MergesValuesABodyReads) {
  // r1 and r2 are the same Relu; a Loop body reads both. After the merge it reads the one left.
  GraphBuilder body;
  body.input("i", {}, {}, DType::I64).input("cond_in", {}, {}, DType::Bool).input("h", {2, 3});
  body.node("Identity", {"cond_in"}, {"cond_out"}).node("Add", {"h", "r1"}, {"a"}).node("Mul", {"a", "r2"}, {"h_next"});
  body.output("cond_out").output("h_next");
  GraphBuilder b;
  b.input("x", {2, 3}).int_scalar("trips", 2);
  b.node("Relu", {"x"}, {"r1"}).node("Relu", {"x"}, {"r2"});
  b.node("Loop", {"trips", "", "x"}, {"y"}, {{"body", graph_attr(body)}}).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  EXPECT_EQ(count_ops(g, "Relu"), 1);
  const ir::Node* loop = find_op(g, "Loop", "");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->inputs, (std::vector<std::string>{"trips", "", "x", "r1"}));
  EXPECT_EQ(ir::outer_scope_names(*loop->attrs.get_graph("body")), std::vector<std::string>{"r1"});
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 7), OptLevel::Basic), 1e-6);
}

}  // namespace
}  // namespace ignis::fuse_test
