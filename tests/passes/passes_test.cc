// SPDX-License-Identifier: Apache-2.0
// Each pass: (a) the rewrite happens on a small graph, (b) outputs equal the unoptimized
// graph's on random inputs (both run through the engine), (c) it does not fire where it must not.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ignis/session.h"
#include "ir/rewrite.h"
#include "onnx/import.h"
#include "passes/pass.h"
#include "runtime/evaluate.h"
#include "testing/model_builder.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

ir::Graph import(const ModelBuilder& b) {
  const std::string bytes = b.bytes();
  auto g = onnx_io::import_model(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "");
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

int count_ops(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op ? 1 : 0;
  return n;
}

int run_pass(Result<int> (*pass)(ir::Graph&, const passes::PassContext&), ir::Graph& g) {
  auto r = pass(g, runtime::make_pass_context());
  EXPECT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(ir::verify(g)) << ir::verify(g).to_string();
  return r ? *r : -1;
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// Runs the model with and without optimization on the same random input; returns max |diff|.
double optimized_vs_plain(const ModelBuilder& b, const Shape& input_shape, OptLevel level) {
  const std::string bytes = b.bytes();
  auto span = std::as_bytes(std::span<const char>(bytes.data(), bytes.size()));
  SessionOptions plain_opts, opt_opts;
  plain_opts.optimization = OptLevel::None;
  opt_opts.optimization = level;
  auto plain = Session::open_bytes(span, plain_opts);
  auto opt = Session::open_bytes(span, opt_opts);
  EXPECT_TRUE(plain && opt);
  if (!plain || !opt) return INFINITY;
  auto v = random_values(static_cast<size_t>(input_shape.numel()), 7);
  Tensor x = Tensor::view(DType::F32, input_shape, v.data());
  auto a = plain->run({{"x", x}});
  auto c = opt->run({{"x", x}});
  EXPECT_TRUE(a && c);
  if (!a || !c) return INFINITY;
  double diff = 0;
  for (int64_t i = 0; i < (*a)[0].numel(); ++i)
    diff = std::max(diff, std::fabs(double((*a)[0].data_as<float>()[i]) - (*c)[0].data_as<float>()[i]));
  return diff;
}

// x -> Conv(W, B) -> BatchNormalization -> Relu -> y
ModelBuilder conv_bn_model(bool conv_output_is_graph_output = false, bool second_consumer = false) {
  ModelBuilder b;
  const int cout = 3, cin = 2;
  b.input("x", DType::F32, {1, cin, 5, 5})
      .initializer_f32("W", {cout, cin, 3, 3}, random_values(cout * cin * 9, 1))
      .initializer_f32("B", {cout}, random_values(cout, 2))
      .initializer_f32("gamma", {cout}, {0.5f, 1.5f, -2.0f})
      .initializer_f32("beta", {cout}, {0.1f, -0.2f, 0.3f})
      .initializer_f32("mean", {cout}, {0.05f, -0.4f, 1.0f})
      .initializer_f32("var", {cout}, {1.0f, 0.25f, 2.0f})
      .node("Conv", {"x", "W", "B"}, {"c"}, "conv", {{"group", 1}})
      .node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"}, "bn")
      .float_attr("epsilon", 1e-3f)
      .node("Relu", {"n"}, {"y"}, "relu")
      .output("y", DType::F32);
  if (conv_output_is_graph_output) b.output("c", DType::F32);
  if (second_consumer) b.node("Neg", {"c"}, {"z"}, "neg").output("z", DType::F32);
  return b;
}

TEST(FuseConvBn, FoldsScaleIntoWeights) {
  ir::Graph g = import(conv_bn_model());
  EXPECT_EQ(run_pass(passes::fuse_conv_bn, g), 1);
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0);
  EXPECT_EQ(count_ops(g, "Conv"), 1);
  EXPECT_LT(optimized_vs_plain(conv_bn_model(), {1, 2, 5, 5}, OptLevel::Extended), 1e-5);
}

TEST(FuseConvBn, DoesNotFireWhenConvOutputIsAGraphOutputOrSharedOrWeightsAreDynamic) {
  ir::Graph a = import(conv_bn_model(/*conv_output_is_graph_output=*/true));
  EXPECT_EQ(run_pass(passes::fuse_conv_bn, a), 0);
  ir::Graph b = import(conv_bn_model(false, /*second_consumer=*/true));
  EXPECT_EQ(run_pass(passes::fuse_conv_bn, b), 0);

  ModelBuilder dyn;
  dyn.input("x", DType::F32, {1, 2, 5, 5}).input("W", DType::F32, {3, 2, 3, 3})
      .initializer_f32("gamma", {3}, {1, 1, 1}).initializer_f32("beta", {3}, {0, 0, 0})
      .initializer_f32("mean", {3}, {0, 0, 0}).initializer_f32("var", {3}, {1, 1, 1})
      .node("Conv", {"x", "W"}, {"c"}, "conv")
      .node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn")
      .output("y", DType::F32);
  ir::Graph c = import(dyn);
  EXPECT_EQ(run_pass(passes::fuse_conv_bn, c), 0);
}

TEST(EliminateIdentity, RewiresConsumersButKeepsGraphOutputNames) {
  ModelBuilder b;
  b.input("x", DType::F32, {4})
      .node("Identity", {"x"}, {"a"}, "id1")
      .node("Relu", {"a"}, {"r"}, "relu")
      .node("Identity", {"r"}, {"y"}, "id_out")
      .node("Dropout", {"r"}, {"d"}, "drop")
      .node("Neg", {"d"}, {"z"}, "neg")
      .output("y", DType::F32).output("z", DType::F32);
  ir::Graph g = import(b);
  EXPECT_EQ(run_pass(passes::eliminate_identity, g), 2);  // id1 and drop; id_out names a graph output
  EXPECT_EQ(count_ops(g, "Identity"), 1);
  EXPECT_EQ(count_ops(g, "Dropout"), 0);
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_LT(optimized_vs_plain(b, {4}, OptLevel::Basic), 1e-7);
}

TEST(EliminateIdentity, KeepsDropoutWhoseMaskIsRead) {
  ModelBuilder b;
  b.input("x", DType::F32, {4})
      .node("Dropout", {"x"}, {"d", "mask"}, "drop")
      .node("Cast", {"mask"}, {"y"}, "cast", {{"to", 1}})
      .output("y", DType::F32).output("d", DType::F32);
  ir::Graph g = import(b);
  EXPECT_EQ(run_pass(passes::eliminate_identity, g), 0);
}

TEST(FoldConstants, EvaluatesConstantSubgraphs) {
  ModelBuilder b;
  b.input("x", DType::F32, {2, 3})
      .initializer_f32("c1", {3}, {1, 2, 3})
      .initializer_f32("c2", {3}, {10, 20, 30})
      .node("Mul", {"c1", "c2"}, {"k"}, "mul_const")
      .node("Neg", {"k"}, {"nk"}, "neg_const")
      .node("Add", {"x", "nk"}, {"y"}, "add")
      .output("y", DType::F32);
  ir::Graph g = import(b);
  EXPECT_EQ(run_pass(passes::fold_constants, g), 2);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Tensor* nk = ir::constant_value(g, "nk");
  ASSERT_NE(nk, nullptr);
  EXPECT_EQ(nk->data_as<float>()[2], -90.0f);
  EXPECT_LT(optimized_vs_plain(b, {2, 3}, OptLevel::Basic), 1e-6);
}

TEST(FoldConstants, LeavesNodesThatReadInputs) {
  ModelBuilder b;
  b.input("x", DType::F32, {3}).initializer_f32("c", {3}, {1, 2, 3})
      .node("Add", {"x", "c"}, {"y"}, "add").output("y", DType::F32);
  ir::Graph g = import(b);
  EXPECT_EQ(run_pass(passes::fold_constants, g), 0);
}

TEST(EliminateDeadCode, RemovesUnreachableNodesAndWeights) {
  ModelBuilder b;
  b.input("x", DType::F32, {3}).initializer_f32("unused_w", {3}, {1, 2, 3})
      .node("Relu", {"x"}, {"y"}, "live")
      .node("Add", {"x", "unused_w"}, {"dead"}, "dead_add")
      .output("y", DType::F32);
  ir::Graph g = import(b);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, g), 2);  // one node, one initializer
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.initializers.count("unused_w"), 0u);
}

}  // namespace
}  // namespace ignis
