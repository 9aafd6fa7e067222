// SPDX-License-Identifier: Apache-2.0
// The pipeline inside control-flow bodies: folding with the enclosing graphs' constants,
// fusions, dead code, nested bodies, and the node's captured inputs kept in step.
#include "ir/outer_scope.h"
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

const ir::Node* first_op(const ir::Graph& g, const std::string& op) { return find_op(g, op, ""); }

const ir::Graph& body_of(const ir::Node& n, const std::string& attr = "body") {
  const ir::Graph* g = n.attrs.get_graph(attr);
  EXPECT_NE(g, nullptr);
  return *g;
}

std::vector<std::string> captured_inputs(const ir::Node& n) {
  return {n.inputs.begin() + static_cast<std::ptrdiff_t>(ir::declared_input_count(n)), n.inputs.end()};
}

// A Loop body's declared part: (i, cond_in, h [2, 3]) -> (cond_out, ...), cond_out = cond_in.
GraphBuilder loop_body() {
  GraphBuilder body;
  body.input("i", {}, {}, DType::I64).input("cond_in", {}, {}, DType::Bool).input("h", {2, 3});
  body.node("Identity", {"cond_in"}, {"cond_out"}).output("cond_out");
  return body;
}

// y = Loop(trips = 3, "", x) over `body`, x [2, 3].
GraphBuilder loop_over(const GraphBuilder& body) {
  GraphBuilder b;
  b.input("x", {2, 3}).int_scalar("trips", 3);
  b.node("Loop", {"trips", "", "x"}, {"y"}, {{"body", graph_attr(body)}});
  return b;
}

TEST(OptimizeBodies, FoldsWithOuterConstantsAndDropsTheCapturedValueNoLongerRead) {
  // The body's only use of the outer weight w is Mul(w, two), which folds.
  GraphBuilder body = loop_body();
  body.scalar("two", 2.0f).node("Mul", {"w", "two"}, {"w2"}).node("Add", {"h", "w2"}, {"h_next"}).output("h_next");
  GraphBuilder b = loop_over(body);
  b.weight("w", {3}, 1).output("y");
  ASSERT_EQ(captured_inputs(b.graph().nodes[0]), std::vector<std::string>{"w"});

  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Node& loop = g.nodes[0];
  EXPECT_TRUE(captured_inputs(loop).empty());
  EXPECT_EQ(loop.inputs.size(), 3u);
  EXPECT_FALSE(g.initializers.count("w"));  // dead in the outer graph now
  const ir::Graph& opt_body = body_of(loop);
  EXPECT_EQ(count_ops(opt_body, "Mul"), 0);
  EXPECT_TRUE(opt_body.initializers.count("w2"));
  EXPECT_TRUE(ir::outer_scope_names(opt_body).empty());
  // Declared inputs and outputs keep their names and declarations.
  ASSERT_EQ(opt_body.inputs.size(), 3u);
  EXPECT_EQ(opt_body.inputs[2].name, "h");
  EXPECT_EQ(opt_body.inputs[2].dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(opt_body.outputs.size(), 2u);
  EXPECT_EQ(opt_body.outputs[1].name, "h_next");
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 1), OptLevel::Basic), 1e-6);
}

TEST(OptimizeBodies, FoldsAndInlinesAnIfNestedInALoop) {
  // flag = Greater(a, zero) folds (a is the outer graph's constant): the If goes. The other If
  // branches on the data; its branches fold a * a, reading a from two scopes out.
  GraphBuilder then_c, else_c;
  then_c.node("Add", {"h", "a"}, {"p"}).output("p");
  else_c.node("Sub", {"h", "a"}, {"q"}).output("q");
  GraphBuilder then_d, else_d;
  then_d.node("Mul", {"a", "a"}, {"aa"}).node("Add", {"c", "aa"}, {"r"}).output("r");
  else_d.node("Mul", {"a", "a"}, {"ab"}).node("Sub", {"c", "ab"}, {"s"}).output("s");
  GraphBuilder body = loop_body();
  body.scalar("zero", 0.0f).node("Greater", {"a", "zero"}, {"flag"});
  body.node("If", {"flag"}, {"c"}, {{"then_branch", graph_attr(then_c)}, {"else_branch", graph_attr(else_c)}});
  body.node("ReduceSum", {"c"}, {"sum"}, {{"keepdims", int_attr(0)}}).node("Greater", {"sum", "zero"}, {"up"});
  body.node("If", {"up"}, {"d"}, {{"then_branch", graph_attr(then_d)}, {"else_branch", graph_attr(else_d)}});
  body.node("Tanh", {"d"}, {"h_next"}).output("h_next");
  GraphBuilder b = loop_over(body);
  b.scalar("a", 0.75f).output("y");

  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  const ir::Node* loop = first_op(g, "Loop");
  ASSERT_NE(loop, nullptr);
  const ir::Graph& opt_body = body_of(*loop);
  ASSERT_EQ(count_ops(opt_body, "If"), 1);  // the data-dependent one
  EXPECT_EQ(count_ops(opt_body, "Greater"), 1);
  EXPECT_EQ(first_op(opt_body, "Add")->outputs, std::vector<std::string>{"c"});  // the inlined branch
  const ir::Node* nested = first_op(opt_body, "If");
  for (const char* branch : {"then_branch", "else_branch"}) {
    EXPECT_EQ(count_ops(body_of(*nested, branch), "Mul"), 0) << branch;
    EXPECT_EQ(ir::outer_scope_names(body_of(*nested, branch)), std::vector<std::string>{"c"}) << branch;
  }
  EXPECT_EQ(captured_inputs(*nested), std::vector<std::string>{"c"});
  EXPECT_EQ(captured_inputs(*loop), std::vector<std::string>{"a"});  // the inlined Add reads it
  // x in [-2, 2] takes both branches over the iterations of some of these seeds.
  for (uint32_t seed : {2u, 3u, 4u})
    EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, seed), OptLevel::Basic), 1e-6);
}

TEST(OptimizeBodies, KeepsLoopCarriedShapesUnknown) {
  // h grows by two rows an iteration, though the body declares it [2, 3]: Size(h) must stay.
  GraphBuilder body = loop_body();
  body.input("acc", {});
  body.node("Concat", {"h", "x"}, {"h_next"}, {{"axis", int_attr(0)}});
  body.node("Size", {"h"}, {"n"}).node("Cast", {"n"}, {"nf"}, {{"to", int_attr(1)}});
  body.node("Add", {"acc", "nf"}, {"acc_next"});
  body.output("h_next").output("acc_next");
  GraphBuilder b;
  b.input("x", {2, 3}).int_scalar("trips", 3).scalar("acc0", 0.0f);
  b.node("Loop", {"trips", "", "x", "acc0"}, {"y", "total"}, {{"body", graph_attr(body)}});
  b.output("y").output("total");
  const ir::Graph g = optimized(b.graph(), passes::Level::All);
  EXPECT_EQ(count_ops(body_of(*first_op(g, "Loop")), "Size"), 1);
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 5)), 1e-6);
}

TEST(OptimizeBodies, FusesInsideBodiesWithTheOuterWeights) {
  GraphBuilder body = loop_body();
  body.node("MatMul", {"h", "W"}, {"m"}).node("Add", {"m", "B"}, {"h_next"}).output("h_next");
  GraphBuilder b = loop_over(body);
  b.weight("W", {3, 3}, 1).weight("B", {3}, 2).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Extended);
  const ir::Node* loop = first_op(g, "Loop");
  ASSERT_NE(loop, nullptr);
  const ir::Graph& opt_body = body_of(*loop);
  const ir::Node* gemm = first_op(opt_body, "Gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->inputs, (std::vector<std::string>{"h", "W", "B"}));
  EXPECT_TRUE(opt_body.initializers.empty());  // the weights are read from the outer graph, not copied
  EXPECT_EQ(captured_inputs(*loop), (std::vector<std::string>{"B", "W"}));
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 6), OptLevel::Extended), 1e-5);
}

TEST(OptimizeBodies, AnIgnisFusionInABodyImportsItsDomainForTheModel) {
  GraphBuilder body = loop_body();
  body.node("MatMul", {"h", "W"}, {"m"}).node("Relu", {"m"}, {"h_next"}).output("h_next");
  GraphBuilder b = loop_over(body);
  b.weight("W", {3, 3}, 1).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::All);
  ASSERT_NE(find_op(body_of(*first_op(g, "Loop")), "FusedMatMul"), nullptr);
  EXPECT_TRUE(g.opsets.count("ai.ignis"));
  // The written model loads and runs as it is.
  const NamedTensors feeds = random_inputs(b.graph(), {{2, 3}}, 9);
  const auto want = run_as_is(b.graph(), feeds);
  const auto got = run_as_is(g, feeds);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  for (int64_t i = 0; i < want[0].numel(); ++i) EXPECT_NEAR(got[0].data_as<float>()[i], want[0].data_as<float>()[i], 1e-5);
}

TEST(OptimizeBodies, BodiesFollowOuterRenames) {
  // eliminate_identity makes the Loop read x where its body reads xi.
  GraphBuilder body = loop_body();
  body.node("Add", {"h", "xi"}, {"h_next"}).output("h_next");
  GraphBuilder b = loop_over(body);
  b.node("Identity", {"x"}, {"xi"}).output("y");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(captured_inputs(g.nodes[0]), std::vector<std::string>{"x"});
  EXPECT_EQ(ir::outer_scope_names(body_of(g.nodes[0])), std::vector<std::string>{"x"});
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 7), OptLevel::Basic), 1e-6);
}

TEST(OptimizeBodies, ScanBodiesToo) {
  // Scan over the rows of x with a running sum; the body's Mul(k, k) folds.
  GraphBuilder body;
  body.input("s", {3}).input("row", {3});
  body.node("Mul", {"k", "k"}, {"kk"}).node("Mul", {"row", "kk"}, {"scaled"});
  body.node("Add", {"s", "scaled"}, {"s_next"}).node("Identity", {"s_next"}, {"out"});
  body.output("s_next").output("out");
  GraphBuilder b;
  b.input("x", {2, 3}).weight("k", {3}, 3).constant("s0", Shape{3}, {0.0f, 0.0f, 0.0f});
  b.node("Scan", {"s0", "x"}, {"total", "rows"}, {{"body", graph_attr(body)}, {"num_scan_inputs", int_attr(1)}});
  b.output("total").output("rows");
  const ir::Graph g = optimized(b.graph(), passes::Level::Basic);
  const ir::Node* scan = first_op(g, "Scan");
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(count_ops(body_of(*scan), "Mul"), 1);
  EXPECT_TRUE(captured_inputs(*scan).empty());
  EXPECT_LT(optimized_vs_plain(b.graph(), random_inputs(b.graph(), {{2, 3}}, 8), OptLevel::Basic), 1e-6);
}

}  // namespace
}  // namespace ignis::fuse_test
