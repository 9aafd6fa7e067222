// SPDX-License-Identifier: Apache-2.0
// fold_static_shapes: Shape / Size of fixed extents become constants (and the shape
// arithmetic after them folds in the pipeline); symbolic extents stay symbolic.
#include "passes/fuse_test_util.h"
#include "passes/reference_runner.h"
#include "passes/pass.h"

namespace ignis::fuse_test {
namespace {

using reference_runner::max_difference;

GraphBuilder with_input(std::vector<int64_t> dims, int64_t opset = 17) {
  GraphBuilder b(opset);
  std::vector<std::string> names(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) names[i] = i == 0 ? "batch" : "seq";
  b.input("x", dims, names);
  return b;
}

// x -> Reshape(x, Concat(Shape(x)[0], [-1])) -> y: flatten all but the first axis, written
// with shape arithmetic as exporters do.
GraphBuilder flatten_by_shape(std::vector<int64_t> dims) {
  GraphBuilder b = with_input(std::move(dims));
  b.int_scalar("zero", 0).ints_constant("axes", {0}).ints_constant("rest", {-1});
  b.node("Shape", {"x"}, {"shape"}).node("Gather", {"shape", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"u"}).node("Concat", {"u", "rest"}, {"target"}, {{"axis", int_attr(0)}});
  b.node("Reshape", {"x", "target"}, {"y"}).output("y");
  return b;
}

std::vector<int64_t> ints_of(const ir::Graph& g, const std::string& name) {
  const Tensor* t = ir::constant_value(g, name);
  if (!t || t->dtype() != DType::I64) return {-999};
  return std::vector<int64_t>(t->data_as<int64_t>(), t->data_as<int64_t>() + t->numel());
}

TEST(FoldStaticShapes, FoldsShapeOfFixedExtentsAndThePipelineFoldsTheRest) {
  GraphBuilder b = flatten_by_shape({2, 3, 4});
  int n = 0;
  const ir::Graph g = run_pass(passes::fold_static_shapes, b.graph(), &n);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(count_ops(g, "Shape"), 0);
  EXPECT_EQ(ints_of(g, "shape"), (std::vector<int64_t>{2, 3, 4}));
  const auto feeds = random_inputs(b.graph(), {{2, 3, 4}}, 1);
  EXPECT_EQ(max_difference(b.graph(), g, feeds), 0.0);
  const ir::Graph all = optimized(b.graph(), passes::Level::Basic);
  ASSERT_EQ(all.nodes.size(), 1u);
  EXPECT_EQ(all.nodes[0].op_type, "Reshape");
  EXPECT_EQ(ints_of(all, all.nodes[0].inputs[1]), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(max_difference(b.graph(), all, feeds), 0.0);
}

TEST(FoldStaticShapes, KeepsSymbolicExtentsSymbolic) {
  int n = -1;
  run_pass(passes::fold_static_shapes, flatten_by_shape({-1, 3, 4}).graph(), &n);
  EXPECT_EQ(n, 0);
  const ir::Graph all = optimized(flatten_by_shape({-1, 3, 4}).graph(), passes::Level::Basic);
  EXPECT_EQ(count_ops(all, "Shape"), 1);
}

TEST(FoldStaticShapes, FoldsTheFixedPartOfAShape) {
  // Shape(start = 1) of [batch, 3, 4] returns only fixed extents; end = 1 a symbolic one.
  GraphBuilder b = with_input({-1, 3, 4}, 15);
  b.node("Shape", {"x"}, {"tail"}, {{"start", int_attr(1)}});
  b.node("Shape", {"x"}, {"head"}, {{"end", int_attr(1)}});
  b.node("Shape", {"x"}, {"last"}, {{"start", int_attr(-1)}});
  b.node("Concat", {"head", "tail", "last"}, {"y"}, {{"axis", int_attr(0)}}).output("y");
  int n = 0;
  const ir::Graph g = run_pass(passes::fold_static_shapes, b.graph(), &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(ints_of(g, "tail"), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ints_of(g, "last"), (std::vector<int64_t>{4}));
  EXPECT_EQ(count_ops(g, "Shape"), 1);
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), {{5, 3, 4}}, 2)), 0.0);
}

TEST(FoldStaticShapes, FoldsSizeAndShapesOfIntermediateValues) {
  GraphBuilder b = with_input({2, 3, 4});
  b.node("Transpose", {"x"}, {"t"}, {{"perm", ints({2, 0, 1})}});
  b.node("Shape", {"t"}, {"st"}).node("Size", {"t"}, {"n"});
  b.ints_constant("axes", {0}).node("Unsqueeze", {"n", "axes"}, {"nu"});
  b.node("Concat", {"st", "nu"}, {"y"}, {{"axis", int_attr(0)}}).output("y");
  int n = 0;
  const ir::Graph g = run_pass(passes::fold_static_shapes, b.graph(), &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(ints_of(g, "st"), (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(ints_of(g, "n"), (std::vector<int64_t>{24}));
  EXPECT_EQ(max_difference(b.graph(), g, random_inputs(b.graph(), {{2, 3, 4}}, 3)), 0.0);
  // Size of a symbolic shape stays.
  GraphBuilder dyn = with_input({-1, 3});
  dyn.node("Size", {"x"}, {"y"}).node("Neg", {"y"}, {"z"}).output("z");
  run_pass(passes::fold_static_shapes, dyn.graph(), &n);
  EXPECT_EQ(n, 0);
}

TEST(FoldStaticShapes, KeepsAShapeThatIsAGraphOutput) {
  GraphBuilder b = with_input({2, 3});
  b.node("Shape", {"x"}, {"y"}).output("y");
  int n = -1;
  const ir::Graph g = run_pass(passes::fold_static_shapes, b.graph(), &n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(count_ops(g, "Shape"), 1);
}

}  // namespace
}  // namespace ignis::fuse_test
