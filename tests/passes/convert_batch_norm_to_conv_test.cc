// SPDX-License-Identifier: Apache-2.0
// convert_batch_norm_to_conv: an inference BatchNormalization no convolution absorbed becomes
// a depthwise 1x1 Conv (then fused with the Relu after it), where the blocked layout runs;
// training-mode nodes, read statistics outputs, non-constant parameters and non-4-D inputs
// stay BatchNormalization. Expected values: the unoptimized graph run through the reference
// BatchNormalization kernel.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

passes::PassContext blocked(bool on) {
  passes::PassContext ctx = runtime::make_pass_context();
  ctx.blocked_layout = on;
  return ctx;
}

// x [2, c, 5, 7] -> BatchNormalization (epsilon 1e-3) -> Relu -> y, with per-channel
// parameters spread over signs and magnitudes (a negative gamma, a variance below 1).
GraphBuilder bn_relu(int64_t c, std::vector<int64_t> dims = {}) {
  GraphBuilder b(17);
  if (dims.empty()) dims = {2, c, 5, 7};
  b.input("x", dims)
      .weight("gamma", {c}, 1, -2.0f, 2.0f)
      .weight("beta", {c}, 2)
      .weight("mean", {c}, 3)
      .weight("var", {c}, 4, 0.1f, 3.0f)
      .node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"n"}, {{"epsilon", float_attr(1e-3f)}})
      .node("Relu", {"n"}, {"y"})
      .output("y");
  return b;
}

// max |a - b| / max(1, max |b|) over the first output.
double relative_diff(const ir::Graph& optimized_graph, const ir::Graph& plain, const NamedTensors& feeds) {
  const std::vector<Tensor> a = run_as_is(optimized_graph, feeds), b = run_as_is(plain, feeds);
  if (a.empty() || b.empty() || !(a[0].shape() == b[0].shape())) return INFINITY;
  double d = 0, peak = 1;
  for (int64_t i = 0; i < a[0].numel(); ++i) {
    const double x = a[0].data_as<float>()[i], y = b[0].data_as<float>()[i];
    d = std::max(d, std::fabs(x - y));
    peak = std::max(peak, std::fabs(y));
  }
  return d / peak;
}

TEST(ConvertBatchNormToConv, MakesADepthwiseConvolutionOfTheSameValues) {
  for (int64_t c : {1, 5, 19}) {
    GraphBuilder b = bn_relu(c);
    int rewrites = 0;
    const ir::Graph g = run_pass(passes::convert_batch_norm_to_conv, b.graph(), blocked(true), &rewrites);
    EXPECT_EQ(rewrites, 1);
    ASSERT_EQ(count_ops(g, "Conv"), 1) << c;
    EXPECT_EQ(count_ops(g, "BatchNormalization"), 0);
    for (const auto& n : g.nodes) {
      if (n.op_type != "Conv") continue;
      EXPECT_EQ(n.attrs.get_int("group", 0), c);
      EXPECT_EQ(n.attrs.get_ints("kernel_shape"), (std::vector<int64_t>{1, 1}));
      ASSERT_EQ(n.inputs.size(), 3u);
      EXPECT_EQ(g.initializers.at(n.inputs[1]).shape(), Shape({c, 1, 1, 1}));
      EXPECT_EQ(g.initializers.at(n.inputs[2]).shape(), Shape({c}));
    }
    const NamedTensors feeds = random_inputs(b.graph(), {{2, c, 5, 7}}, 9);
    EXPECT_LT(relative_diff(g, b.graph(), feeds), 1e-6) << c;
    // Through the pipeline the Relu fuses into it.
    ir::Graph all = b.graph();
    ASSERT_TRUE(passes::optimize(all, passes::Level::All, blocked(true)));
    EXPECT_EQ(count_ops(all, "Relu") + count_ops(all, "BatchNormalization"), 0) << c;
    EXPECT_LT(relative_diff(all, b.graph(), feeds), 1e-6) << c;
  }
}

TEST(ConvertBatchNormToConv, LeavesWhatItCannotOrNeedNotTake) {
  int rewrites = -1;
  // Off where the blocked layout does not run.
  run_pass(passes::convert_batch_norm_to_conv, bn_relu(4).graph(), blocked(false), &rewrites);
  EXPECT_EQ(rewrites, 0);
  // 3-D input (BatchNorm1d).
  GraphBuilder rank3 = bn_relu(4, {2, 4, 9});
  run_pass(passes::convert_batch_norm_to_conv, rank3.graph(), blocked(true), &rewrites);
  EXPECT_EQ(rewrites, 0);
  // A parameter that is an input, not an initializer.
  GraphBuilder dynamic(17);
  dynamic.input("x", {1, 3, 4, 4})
      .input("gamma", {3})
      .weight("beta", {3}, 2)
      .weight("mean", {3}, 3)
      .weight("var", {3}, 4, 0.1f, 3.0f)
      .node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"})
      .output("y");
  run_pass(passes::convert_batch_norm_to_conv, dynamic.graph(), blocked(true), &rewrites);
  EXPECT_EQ(rewrites, 0);
  // Training mode, and a running-mean output that is read.
  GraphBuilder training = bn_relu(3);
  ir::Graph t = training.graph();
  for (auto& n : t.nodes)
    if (n.op_type == "BatchNormalization") n.attrs.set("training_mode", int_attr(1));
  run_pass(passes::convert_batch_norm_to_conv, t, blocked(true), &rewrites);
  EXPECT_EQ(rewrites, 0);
  GraphBuilder stats(17);
  stats.input("x", {1, 3, 4, 4})
      .weight("gamma", {3}, 1)
      .weight("beta", {3}, 2)
      .weight("mean", {3}, 3)
      .weight("var", {3}, 4, 0.1f, 3.0f)
      .node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y", "running_mean"})
      .output("y")
      .output("running_mean");
  run_pass(passes::convert_batch_norm_to_conv, stats.graph(), blocked(true), &rewrites);
  EXPECT_EQ(rewrites, 0);
  // After a Conv the pipeline folds it into the Conv (fuse_conv_bn) first.
  GraphBuilder after_conv(17);
  after_conv.input("x", {1, 3, 6, 6})
      .weight("w", {4, 3, 3, 3}, 5)
      .weight("gamma", {4}, 1)
      .weight("beta", {4}, 2)
      .weight("mean", {4}, 3)
      .weight("var", {4}, 4, 0.1f, 3.0f)
      .node("Conv", {"x", "w"}, {"c"})
      .node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"})
      .output("y");
  ir::Graph folded = after_conv.graph();
  auto counts = passes::optimize(folded, passes::Level::All, blocked(true));
  ASSERT_TRUE(counts);
  for (const auto& pc : *counts) {
    if (pc.name == "convert_batch_norm_to_conv") {
      EXPECT_EQ(pc.rewrites, 0);
    }
  }
  EXPECT_EQ(folded.nodes.size(), 1u);
}

}  // namespace
}  // namespace ignis::fuse_test
