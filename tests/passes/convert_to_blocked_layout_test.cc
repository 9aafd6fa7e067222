// SPDX-License-Identifier: Apache-2.0
// convert_to_blocked_layout: runs of pointwise / depthwise convolutions -> ai.ignis
// BlockedConv between BlockChannels and UnblockChannels. The pass is forced on (it is off
// where the blocked kernels are not fast), so the rewrite is checked on every machine; the
// numbers then come from whichever BlockedConv kernel the machine has.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

// direct / winograd: whether the kernels run dense and grouped windows / 3x3s with Winograd
// blocked (off unless a test says, so that the rewrites checked do not depend on the
// machine's instruction set).
passes::PassContext forced(bool on = true, bool direct = false, bool winograd = false) {
  passes::PassContext ctx = runtime::make_pass_context();
  ctx.blocked_layout = on;
  ctx.blocked_direct = on && direct;
  ctx.blocked_winograd = on && winograd;
  ctx.blocked_direct_strided = false;
  ctx.blocked_direct_grouped = false;
  return ctx;
}

// The pipeline at level All with the layout pass forced on or off.
ir::Graph optimize_with(const ir::Graph& in, bool blocked) {
  ir::Graph g = in;
  auto r = passes::optimize(g, passes::Level::All, forced(blocked));
  EXPECT_TRUE(r) << r.error().to_string();
  return g;
}

int count_op(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op ? 1 : 0;
  return n;
}

// max |a - b| over max(1, max |b|): the blocked kernels sum in another order than the NCHW
// ones, so differences scale with the outputs (hundreds here).
double relative_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  if (a.size() != b.size() || a.empty()) return INFINITY;
  double d = 0, peak = 1;
  for (size_t o = 0; o < a.size(); ++o) {
    EXPECT_EQ(a[o].shape(), b[o].shape());
    if (!(a[o].shape() == b[o].shape())) return INFINITY;
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      const double x = a[o].data_as<float>()[i], y = b[o].data_as<float>()[i];
      d = std::max(d, std::fabs(x - y));
      peak = std::max(peak, std::fabs(y));
    }
  }
  return d / peak;
}

// One inverted-residual block, as mobilenet_v2 has them: 1x1 expand (ReLU6), 3x3 depthwise
// (ReLU6), 1x1 project, + the block's input.
void inverted_residual(GraphBuilder& b, const std::string& in, const std::string& out, int64_t c, int64_t e,
                       uint32_t seed) {
  const std::string p = out + "_";
  b.weight(p + "w1", {e, c, 1, 1}, seed)
      .weight(p + "b1", {e}, seed + 1)
      .weight(p + "w2", {e, 1, 3, 3}, seed + 2)
      .weight(p + "b2", {e}, seed + 3)
      .weight(p + "w3", {c, e, 1, 1}, seed + 4)
      .scalar(p + "lo", 0.0f)
      .scalar(p + "hi", 6.0f)
      .node("Conv", {in, p + "w1", p + "b1"}, {p + "c1"})
      .node("Clip", {p + "c1", p + "lo", p + "hi"}, {p + "a1"})
      .node("Conv", {p + "a1", p + "w2", p + "b2"}, {p + "c2"},
            {{"group", int_attr(e)}, {"pads", ints({1, 1, 1, 1})}, {"kernel_shape", ints({3, 3})}})
      .node("Clip", {p + "c2", p + "lo", p + "hi"}, {p + "a2"})
      .node("Conv", {p + "a2", p + "w3"}, {p + "c3"})
      .node("Add", {p + "c3", in}, {out});
}

// x [batch, 24, 13, 11] -> two inverted residuals (24 -> 96 -> 24) -> y.
GraphBuilder two_blocks() {
  GraphBuilder b(17);
  b.input("x", {-1, 24, 13, 11}, {"batch", "", "", ""});
  inverted_residual(b, "x", "h", 24, 96, 10);
  inverted_residual(b, "h", "y", 24, 96, 20);
  b.output("y");
  return b;
}

TEST(ConvertToBlockedLayout, KeepsARunOfConvolutionsBlocked) {
  GraphBuilder b = two_blocks();
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  EXPECT_EQ(count_op(g, "FusedConv"), 0);
  EXPECT_EQ(count_op(g, "Conv"), 0);
  // x is blocked once (both the first convolution and the first residual read it), y
  // unblocked once under its own name.
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  ASSERT_EQ(count_op(g, "UnblockChannels"), 1);
  for (const auto& n : g.nodes) {
    if (n.op_type == "UnblockChannels") {
      EXPECT_EQ(n.outputs, std::vector<std::string>{"y"});
      EXPECT_EQ(n.attrs.get_int("channels", 0), 24);
    }
    if (n.op_type == "BlockedConv") {
      EXPECT_EQ(n.attrs.get_int("block", 0), 16);
    }
  }
  const NamedTensors feeds = random_inputs(b.graph(), {{2, 24, 13, 11}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

TEST(ConvertToBlockedLayout, UnblocksValuesReadOutsideTheRun) {
  GraphBuilder b = two_blocks();
  b.output("h");                            // the first block's output is also a graph output
  b.node("Relu", {"h"}, {"r"}).output("r");  // and feeds a Relu
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 2);  // h once for both readers, y
  // Reading the 96-channel depthwise output outside as well would reorder more than the run
  // computes: the run stays NCHW.
  GraphBuilder c = two_blocks();
  c.node("Relu", {"h_a2"}, {"r"}).output("r");
  EXPECT_EQ(count_op(optimize_with(c.graph(), true), "BlockedConv"), 0);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 24, 13, 11}}, 6);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

// The real lanes of a blocked [N, CB, H, W, B] tensor as the NCHW [N, channels, H, W] tensor.
Tensor unblocked(const Tensor& t, int64_t channels) {
  const int64_t n = t.dim(0), blocks = t.dim(1), h = t.dim(2), w = t.dim(3), b = t.dim(4);
  Tensor out = Tensor::empty(DType::F32, Shape{n, channels, h, w});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < h * w; ++p)
        out.data_as<float>()[(i * channels + c) * h * w + p] =
            t.data_as<float>()[((i * blocks + c / b) * h * w + p) * b + c % b];
  return out;
}

TEST(ConvertToBlockedLayout, LeavesNamedGraphOutputsBlockedUnderTheirNames) {
  // Observing the 96-channel depthwise output (h_a2) and the first block's output (h), as
  // calibration does: named in blocked_outputs they are no edge (UnblocksValuesReadOutsideTheRun
  // shows the run dropped when h_a2 is read NCHW) and come out blocked under their own names.
  GraphBuilder b = two_blocks();
  b.output("h_a2").output("h");
  passes::PassContext ctx = forced();
  ctx.blocked_outputs = {"h_a2", "h"};
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  ASSERT_EQ(count_op(g, "UnblockChannels"), 1);  // y only
  for (const auto& o : g.outputs) {
    if (o.name != "y") {
      EXPECT_FALSE(o.has_shape) << o.name;
    }
  }
  const NamedTensors feeds = random_inputs(b.graph(), {{2, 24, 13, 11}}, 7);
  const std::vector<Tensor> got = run_as_is(g, feeds), want = run_as_is(b.graph(), feeds);
  ASSERT_EQ(got.size(), 3u);
  ASSERT_EQ(got[1].shape(), (Shape{2, 6, 13, 11, 16}));
  ASSERT_EQ(got[2].shape(), (Shape{2, 2, 13, 11, 16}));
  EXPECT_LT(relative_diff({got[0], unblocked(got[1], 96), unblocked(got[2], 24)}, want), 1e-5);

  // h also read by a Relu outside the run: it is reordered back once, for both readers.
  b.node("Relu", {"h"}, {"r"}).output("r");
  ir::Graph g2 = b.graph();
  ASSERT_TRUE(passes::optimize(g2, passes::Level::All, ctx));
  EXPECT_EQ(count_op(g2, "UnblockChannels"), 2);  // y, h
  const std::vector<Tensor> got2 = run_as_is(g2, feeds);
  ASSERT_EQ(got2.size(), 4u);
  EXPECT_EQ(got2[2].shape(), (Shape{2, 24, 13, 11}));
}

// x * sigmoid(x), which fuse_conv_activation folds into the convolution as SiLU.
void silu(GraphBuilder& b, const std::string& in, const std::string& out) {
  b.node("Sigmoid", {in}, {out + "_sig"}).node("Mul", {in, out + "_sig"}, {out});
}

// An efficientnet block: 1x1 expand (SiLU), 3x3 depthwise (SiLU), squeeze-excitation
// (GlobalAveragePool, 1x1 reduce (SiLU), 1x1 expand (Sigmoid), Mul), 1x1 project, + input.
void se_block(GraphBuilder& b, const std::string& in, const std::string& out, int64_t c, int64_t e, uint32_t seed) {
  const std::string p = out + "_";
  b.weight(p + "w1", {e, c, 1, 1}, seed)
      .weight(p + "w2", {e, 1, 3, 3}, seed + 1)
      .weight(p + "b2", {e}, seed + 2)
      .weight(p + "wr", {8, e, 1, 1}, seed + 3)
      .weight(p + "we", {e, 8, 1, 1}, seed + 4)
      .weight(p + "w3", {c, e, 1, 1}, seed + 5)
      .node("Conv", {in, p + "w1"}, {p + "c1"});
  silu(b, p + "c1", p + "a1");
  b.node("Conv", {p + "a1", p + "w2", p + "b2"}, {p + "c2"},
         {{"group", int_attr(e)}, {"pads", ints({1, 1, 1, 1})}, {"kernel_shape", ints({3, 3})}});
  silu(b, p + "c2", p + "a2");
  b.node("GlobalAveragePool", {p + "a2"}, {p + "pool"}).node("Conv", {p + "pool", p + "wr"}, {p + "r"});
  silu(b, p + "r", p + "ra");
  b.node("Conv", {p + "ra", p + "we"}, {p + "g"})
      .node("Sigmoid", {p + "g"}, {p + "gate"})
      .node("Mul", {p + "gate", p + "a2"}, {p + "scaled"})
      .node("Conv", {p + "scaled", p + "w3"}, {p + "c3"})
      .node("Add", {p + "c3", in}, {out});
}

TEST(ConvertToBlockedLayout, TakesSqueezeExcitationIntoTheRun) {
  GraphBuilder b(17);
  b.input("x", {-1, 24, 14, 14}, {"batch", "", "", ""});
  se_block(b, "x", "h", 24, 96, 30);
  se_block(b, "h", "y", 24, 96, 40);
  b.output("y");
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  // Expand, depthwise and project of both blocks run blocked; the gate's Mul becomes the
  // project's S and the pooling reads the blocked depthwise output; the two 1x1 convolutions
  // on the pooled 1x1 image stay NCHW (they would reorder as much as they compute).
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  EXPECT_EQ(count_op(g, "BlockedGlobalAveragePool"), 2);
  EXPECT_EQ(count_op(g, "GlobalAveragePool"), 0);
  EXPECT_EQ(count_op(g, "Mul"), 0);
  EXPECT_EQ(count_op(g, "FusedConv"), 4);
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  int scaled = 0;
  for (const auto& n : g.nodes) scaled += n.op_type == "BlockedConv" && n.inputs.size() == 5 ? 1 : 0;
  EXPECT_EQ(scaled, 2);
  const NamedTensors feeds = random_inputs(b.graph(), {{2, 24, 14, 14}}, 7);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

TEST(ConvertToBlockedLayout, StartsTheRunAtTheStemReadingThePlainImage) {
  // image [batch, 3, 31, 30] -> 3x3/2 stem (32 channels, ReLU6) -> an inverted residual -> y.
  GraphBuilder b(17);
  b.input("image", {-1, 3, 31, 30}, {"batch", "", "", ""})
      .weight("ws", {32, 3, 3, 3}, 50)
      .weight("bs", {32}, 51)
      .scalar("lo", 0.0f)
      .scalar("hi", 6.0f)
      .node("Conv", {"image", "ws", "bs"}, {"s"},
            {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}, {"kernel_shape", ints({3, 3})}})
      .node("Clip", {"s", "lo", "hi"}, {"x"});
  inverted_residual(b, "x", "y", 32, 96, 60);
  b.output("y");
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 4);
  EXPECT_EQ(count_op(g, "BlockChannels"), 0);  // the stem reads the image as it is
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  int plain = 0;
  for (const auto& n : g.nodes)
    if (n.op_type == "BlockedConv" && n.attrs.get_int("plain_input", 0) == 1) {
      ++plain;
      EXPECT_EQ(n.inputs[0], "image");
    }
  EXPECT_EQ(plain, 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{2, 3, 31, 30}}, 8);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

TEST(ConvertToBlockedLayout, LeavesAOneChannelScalingSoTheStemAfterItReadsPlain) {
  // A spectrogram's one channel scaled by a 1x1 convolution (a BatchNormalization folded) ->
  // 3x3 stem (1 -> 32) -> an inverted residual. Blocking the 1x1 would pad its one channel to
  // a block of 16 in and out, and take the stem's plain input from it.
  GraphBuilder b(17);
  b.input("spec", {1, 1, 20, 23})
      .weight("wn", {1, 1, 1, 1}, 70)
      .weight("bn", {1}, 71)
      .weight("ws", {32, 1, 3, 3}, 72)
      .weight("bs", {32}, 73)
      .node("Conv", {"spec", "wn", "bn"}, {"norm"})
      .node("Conv", {"norm", "ws", "bs"}, {"s"}, {{"pads", ints({1, 1, 1, 1})}, {"kernel_shape", ints({3, 3})}})
      .node("Relu", {"s"}, {"x"});
  inverted_residual(b, "x", "y", 32, 96, 74);
  b.output("y");
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockChannels"), 0);
  int plain = 0;
  for (const auto& n : g.nodes) {
    if (n.op_type == "BlockedConv" && n.attrs.get_int("plain_input", 0) == 1) {
      ++plain;
      EXPECT_EQ(n.inputs[0], "norm");  // the 1x1's NCHW output
    }
  }
  EXPECT_EQ(plain, 1);
  EXPECT_EQ(count_op(g, "BlockedConv"), 4);  // the stem and the inverted residual's three
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 1, 20, 23}}, 9);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

TEST(ConvertToBlockedLayout, BlocksALoneStemWithAWideWindow) {
  // resnet's stem: image -> 7x7/2 Conv (3 -> 64) -> Relu -> 3x3/2 MaxPool -> y. Blocked on its
  // own, the Relu and the pool with it (element-wise work and pools of whole blocks join a
  // run): one reorder, of the pooled output; a 3x3 stem alone is left.
  GraphBuilder b(17);
  b.input("image", {1, 3, 45, 38})
      .weight("w", {64, 3, 7, 7}, 30)
      .weight("bias", {64}, 31)
      .node("Conv", {"image", "w", "bias"}, {"s"},
            {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}, {"kernel_shape", ints({7, 7})}})
      .node("Relu", {"s"}, {"r"})
      .node("MaxPool", {"r"}, {"y"}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})
      .output("y");
  ir::Graph g = b.graph();
  auto r = passes::convert_to_blocked_layout(g, forced());
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 3);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockChannels"), 0);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  EXPECT_EQ(count_op(g, "BlockedMaxPool"), 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 3, 45, 38}}, 9);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);

  // In bfloat16 sessions the GEMM's stem is the faster one.
  g = b.graph();
  passes::PassContext bf16 = forced();
  bf16.precision = Precision::Bf16;
  r = passes::convert_to_blocked_layout(g, bf16);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);

  GraphBuilder narrow(17);
  narrow.input("image", {1, 3, 32, 32})
      .weight("w", {32, 3, 3, 3}, 32)
      .node("Conv", {"image", "w"}, {"s"}, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})
      .node("Relu", {"s"}, {"y"})
      .output("y");
  g = narrow.graph();
  r = passes::convert_to_blocked_layout(g, forced());
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
}

TEST(ConvertToBlockedLayout, LeavesLoneAndUnpayingConvolutions) {
  // A lone pointwise convolution: two reorders for one kernel.
  GraphBuilder lone(17);
  lone.input("x", {1, 32, 7, 7}).weight("w", {64, 32, 1, 1}, 1).node("Conv", {"x", "w"}, {"y"}).output("y");
  ir::Graph g = lone.graph();
  auto r = passes::convert_to_blocked_layout(g, forced());
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
  // Two convolutions whose outputs are small next to the reordered input: 64 -> 8 -> 8.
  GraphBuilder narrow(17);
  narrow.input("x", {1, 64, 7, 7})
      .weight("w1", {8, 64, 1, 1}, 1)
      .weight("w2", {8, 8, 1, 1}, 2)
      .node("Conv", {"x", "w1"}, {"a"})
      .node("Conv", {"a", "w2"}, {"y"})
      .output("y");
  g = narrow.graph();
  r = passes::convert_to_blocked_layout(g, forced());
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
  // 3x3 dense and strided 1x1 convolutions are not blockable without the direct kernel; nor
  // is anything when the context says the blocked kernels are not fast here.
  GraphBuilder dense(17);
  dense.input("x", {1, 16, 9, 9})
      .weight("w1", {64, 16, 3, 3}, 1)
      .weight("w2", {64, 64, 1, 1}, 2)
      .node("Conv", {"x", "w1"}, {"a"}, {{"pads", ints({1, 1, 1, 1})}})
      .node("Conv", {"a", "w2"}, {"y"}, {{"strides", ints({2, 2})}})
      .output("y");
  g = dense.graph();
  r = passes::convert_to_blocked_layout(g, forced());
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
  g = two_blocks().graph();
  r = passes::convert_to_blocked_layout(g, forced(false));
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, 0);
}

// x [1, 16, 28, 28] -> 1x1 (Relu) -> 3x3 stride 2 in `groups` groups (Relu) -> 1x1 -> 1x1:
// regnet's block shape, long enough for its run to pay for the two reorders.
GraphBuilder grouped_block(int64_t groups) {
  GraphBuilder b(17);
  b.input("x", {1, 16, 28, 28})
      .weight("w1", {64, 16, 1, 1}, 1)
      .weight("b1", {64}, 2)
      .weight("w2", {64, 64 / groups, 3, 3}, 3)
      .weight("b2", {64}, 4)
      .weight("w3", {64, 64, 1, 1}, 5)
      .weight("w4", {16, 64, 1, 1}, 6)
      .node("Conv", {"x", "w1", "b1"}, {"c1"})
      .node("Relu", {"c1"}, {"a1"})
      .node("Conv", {"a1", "w2", "b2"}, {"c2"},
            {{"group", int_attr(groups)}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})
      .node("Relu", {"c2"}, {"a2"})
      .node("Conv", {"a2", "w3"}, {"c3"})
      .node("Conv", {"c3", "w4"}, {"y"})
      .output("y");
  return b;
}

// 1x1 -> 3x3 ("same", `group` groups) -> 1x1 at c channels on a 28x28 image.
GraphBuilder bottleneck(int64_t c, int64_t group) {
  GraphBuilder b(17);
  b.input("x", {1, c, 28, 28})
      .weight("w1", {c, c, 1, 1}, 1)
      .weight("w2", {c, c / group, 3, 3}, 2)
      .weight("w3", {c, c, 1, 1}, 3)
      .node("Conv", {"x", "w1"}, {"a"})
      .node("Conv", {"a", "w2"}, {"b"}, {{"group", int_attr(group)}, {"pads", ints({1, 1, 1, 1})}})
      .node("Conv", {"b", "w3"}, {"y"})
      .output("y");
  return b;
}

TEST(ConvertToBlockedLayout, TakesDenseAndGroupedWindowsWhereTheDirectKernelRuns) {
  for (int64_t groups : {1, 4, 8}) {  // 64, 16 and 8 channels per group
    GraphBuilder b = grouped_block(groups);
    ir::Graph g = b.graph();
    ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
    ASSERT_TRUE(ir::verify(g));
    EXPECT_EQ(count_op(g, "BlockedConv"), 4) << groups << " groups";
    EXPECT_EQ(count_op(g, "FusedConv") + count_op(g, "Conv"), 0);
    EXPECT_EQ(count_op(g, "BlockChannels"), 1);
    EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
    const NamedTensors feeds = random_inputs(b.graph(), {{1, 16, 28, 28}}, 5);
    EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5) << groups << " groups";
    // Without the direct kernel the window stays NCHW and cuts the run: the first 1x1 alone
    // (not converted), the last two (converted: their outputs are small next to the input).
    g = b.graph();
    ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false)));
    EXPECT_LT(count_op(g, "BlockedConv"), 4) << groups << " groups";
    EXPECT_EQ(count_op(g, "Conv") + count_op(g, "FusedConv") + count_op(g, "BlockedConv"), 4) << groups << " groups";
  }
  // Groups of 4 channels (a quarter block) are not taken: only where grouped windows are
  // (TakesGroupedWindowsWhereTheDirectKernelRunsThoseOnly).
  GraphBuilder quarter = grouped_block(16);
  ir::Graph g = quarter.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
  // A 3x3 Winograd runs faster in NCHW (64 -> 64 channels, 28x28) stays out of the run.
  g = bottleneck(64, 1).graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
  EXPECT_EQ(count_op(g, "Conv") + count_op(g, "FusedConv"), 3);
  // With 32 input channels the direct kernel beats Winograd: four 1x1 + 3x3 pairs (long
  // enough to pay for the two reorders) run blocked.
  GraphBuilder narrow(17);
  narrow.input("x", {1, 32, 28, 28});
  std::string v = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string p = "l" + std::to_string(i);
    narrow.weight(p + "w1", {32, 32, 1, 1}, 10 + 2 * i)
        .weight(p + "w2", {32, 32, 3, 3}, 11 + 2 * i)
        .node("Conv", {v, p + "w1"}, {p + "a"})
        .node("Conv", {p + "a", p + "w2"}, {p + "b"}, {{"pads", ints({1, 1, 1, 1})}});
    v = p + "b";
  }
  narrow.output(v);
  g = narrow.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 8);
  const NamedTensors feeds = random_inputs(narrow.graph(), {{1, 32, 28, 28}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(narrow.graph(), feeds)), 1e-5);
}

// Three times 1x1 -> 3x3 -> 1x1 at 64 channels on a size x size image (resnet bottlenecks
// without their residuals; three, so that the run pays for its two reorders).
GraphBuilder bottlenecks(int64_t size, int64_t stride = 1) {
  GraphBuilder b(17);
  b.input("x", {1, 64, size, size});
  std::string v = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string p = "l" + std::to_string(i);
    b.weight(p + "w1", {64, 64, 1, 1}, 10 * i + 1)
        .weight(p + "w2", {64, 64, 3, 3}, 10 * i + 2)
        .weight(p + "b2", {64}, 10 * i + 3)
        .weight(p + "w3", {64, 64, 1, 1}, 10 * i + 4)
        .node("Conv", {v, p + "w1"}, {p + "a"})
        .node("Relu", {p + "a"}, {p + "ar"})
        .node("Conv", {p + "ar", p + "w2", p + "b2"}, {p + "b"},
              {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({stride, stride})}})
        .node("Relu", {p + "b"}, {p + "br"})
        .node("Conv", {p + "br", p + "w3"}, {p + "c"});
    v = p + "c";
  }
  b.output(v);
  return b;
}

TEST(ConvertToBlockedLayout, TakesWinogradWindowsWhereTheBlockedKernelRunsThem) {
  // 28x28 outputs: 49 tiles of 4x4, where the NCHW kernel runs F(4x4) too: the 3x3 joins the run.
  GraphBuilder b = bottlenecks(28);
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 9);
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 64, 28, 28}}, 5);
  // Winograd F(4x4) rounds like a deeper sum (conv_winograd_f4x4_avx512.cc).
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-4);
  // Without the Winograd kernel the 3x3s cut the run into pairs of 1x1s, which do not pay.
  g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, false)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
  // 14x14 outputs (16 tiles) join too; 7x7 ones (4 tiles) stay NCHW, and with them the run.
  GraphBuilder fourteen = bottlenecks(14);
  g = fourteen.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 9);
  const NamedTensors small_feeds = random_inputs(fourteen.graph(), {{1, 64, 14, 14}}, 6);
  EXPECT_LT(relative_diff(run_as_is(g, small_feeds), run_as_is(fourteen.graph(), small_feeds)), 1e-4);
  GraphBuilder small = bottlenecks(7);
  g = small.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
  // Strided 3x3s are not Winograd's.
  GraphBuilder strided = bottlenecks(56, 2);
  g = strided.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
}

// image [1, 3, size, size] -> 7x7/2 stem (3 -> 64) -> 3x3/2 (64 -> 64) -> four 3x3s (64 -> 64),
// each with Relu.
GraphBuilder strided_stack(int64_t size) {
  GraphBuilder b(17);
  b.input("image", {1, 3, size, size})
      .weight("ws", {64, 3, 7, 7}, 1)
      .node("Conv", {"image", "ws"}, {"s"}, {{"pads", ints({3, 3, 3, 3})}, {"strides", ints({2, 2})}})
      .node("Relu", {"s"}, {"sr"})
      .weight("wd", {64, 64, 3, 3}, 2)
      .node("Conv", {"sr", "wd"}, {"d"}, {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}})
      .node("Relu", {"d"}, {"dr"});
  std::string v = "dr";
  for (int i = 0; i < 4; ++i) {
    const std::string p = "l" + std::to_string(i);
    b.weight(p + "w", {64, 64, 3, 3}, 10 + i)
        .node("Conv", {v, p + "w"}, {p + "c"}, {{"pads", ints({1, 1, 1, 1})}})
        .node("Relu", {p + "c"}, {p + "r"});
    v = p + "r";
  }
  b.output(v);
  return b;
}

// Where the context takes grouped windows only (AVX-512): the grouped 3x3 of every group
// width the kernel runs (16, 8, 4 and 2 channels per group) joins the run, the dense one
// (64 channels, strided but narrow) does not.
TEST(ConvertToBlockedLayout, TakesGroupedWindowsWhereTheDirectKernelRunsThoseOnly) {
  passes::PassContext ctx = forced(true, false, true);
  ctx.blocked_direct_grouped = true;
  for (int64_t groups : {4, 8, 16, 32}) {
    GraphBuilder b = grouped_block(groups);
    ir::Graph g = b.graph();
    ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
    ASSERT_TRUE(ir::verify(g));
    EXPECT_EQ(count_op(g, "BlockedConv"), 4) << groups << " groups";
    EXPECT_EQ(count_op(g, "FusedConv") + count_op(g, "Conv"), 0) << groups << " groups";
    const NamedTensors feeds = random_inputs(b.graph(), {{1, 16, 28, 28}}, 5);
    EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5) << groups << " groups";
  }
  GraphBuilder dense = grouped_block(1);
  ir::Graph g = dense.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  EXPECT_LT(count_op(g, "BlockedConv"), 4);
  EXPECT_EQ(count_op(g, "Conv") + count_op(g, "FusedConv") + count_op(g, "BlockedConv"), 4);
  // Groups of 64 / 24 channels (neither whole blocks nor within one) stay NCHW.
  g = bottleneck(48, 2).graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
}

TEST(ConvertToBlockedLayout, TakesWideStridedWindowsWhereTheDirectKernelRunsThoseOnly) {
  // 115x115 -> 58x58 -> 29x29: the strided 3x3's rows fill two 12-position tiles, and the
  // 3x3s after it (64 tiles of 4x4) are Winograd's: one run from the stem.
  GraphBuilder b = strided_stack(115);
  passes::PassContext ctx = forced(true, false, true);
  ctx.blocked_direct_strided = true;
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  EXPECT_EQ(count_op(g, "BlockChannels"), 0);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 3, 115, 115}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-4);
  // Without the strided windows: the wide stem alone (its pool-less run does not pay), and
  // the four 3x3s after the NCHW strided one do not pay for their two reorders.
  g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  EXPECT_EQ(count_op(g, "BlockedConv"), 1);
  // 51x51 -> 26x26 -> 13x13: too narrow for the direct tile (and for Winograd after it).
  GraphBuilder narrow = strided_stack(51);
  g = narrow.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  EXPECT_EQ(count_op(g, "BlockedConv"), 1);
}

// A downsampling block at 14x14 -> 7x7: the stride-2 1x1 projection (narrow, unpadded) and
// the 1x1s around it run blocked on every instruction set, without the direct kernel: one
// run, x blocked once and y unblocked once. A padded strided 1x1 is not taken.
TEST(ConvertToBlockedLayout, TakesStridedPointwiseConvolutionsIntoTheRun) {
  auto block = [](bool padded) {
    GraphBuilder b(17);
    b.input("x", {1, 16, 14, 14})
        .weight("w1", {64, 16, 1, 1}, 1)
        .weight("b1", {64}, 2)
        .node("Conv", {"x", "w1", "b1"}, {"c1"})
        .node("Relu", {"c1"}, {"r1"})
        .weight("w1b", {64, 64, 1, 1}, 5)
        .node("Conv", {"r1", "w1b"}, {"c1b"})
        .node("Relu", {"c1b"}, {"r1b"})
        .weight("wp", {96, 64, 1, 1}, 3)
        .node("Conv", {"r1b", "wp"}, {"p"},
              {{"strides", ints({2, 2})}, {"pads", padded ? ints({1, 1, 1, 1}) : ints({0, 0, 0, 0})}})
        .weight("w2", {96, 96, 1, 1}, 4)
        .node("Conv", {"p", "w2"}, {"c2"})
        .node("Add", {"c2", "p"}, {"s"})
        .node("Relu", {"s"}, {"y"})
        .output("y");
    return b;
  };
  GraphBuilder b = block(false);
  const ir::Graph g = optimize_with(b.graph(), true);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 4);
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 16, 14, 14}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
  // Padded, the projection reads zeros at the plane's edges: left to the NCHW kernels, and
  // the 1x1s either side of it do not pay for their reorders.
  GraphBuilder p = block(true);
  const ir::Graph gp = optimize_with(p.graph(), true);
  EXPECT_EQ(count_op(gp, "BlockedConv"), 0);
}

// In a bfloat16 session where the direct kernel runs in bfloat16, every dense window joins
// the run: the narrow strided 3x3 and the 3x3s at 13x13 after it (which stay NCHW in
// float32 sessions, above); where the CPU lacks AVX512_BF16 the bfloat16 session keeps the
// rules that leave strided windows to the NCHW GEMM.
TEST(ConvertToBlockedLayout, TakesEveryDenseWindowWhereTheDirectKernelRunsInBf16) {
  GraphBuilder narrow = strided_stack(51);
  passes::PassContext ctx = forced(true, false, true);
  ctx.blocked_direct_strided = true;
  ctx.precision = Precision::Bf16;
  ctx.blocked_direct_bf16 = true;
  ir::Graph g = narrow.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 6);
  EXPECT_EQ(count_op(g, "Conv") + count_op(g, "FusedConv"), 0);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  const NamedTensors feeds = random_inputs(narrow.graph(), {{1, 3, 51, 51}}, 6);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(narrow.graph(), feeds)), 1e-4);
  ctx.blocked_direct_bf16 = false;
  g = narrow.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, ctx));
  EXPECT_EQ(count_op(g, "BlockedConv"), 0);
}

// squeezenet's shape: image -> 3x3/2 stem (3 -> 32) -> Relu -> 3x3/2 MaxPool (ceil_mode) ->
// two fire modules (1x1 squeeze to 16; 1x1 and 3x3 expands to 32 each, Relu; Concat of the
// expands) with a 2x2/2 MaxPool between -> 1x1 (64 -> 48) -> GlobalAveragePool.
GraphBuilder fire_net(int64_t expand) {
  GraphBuilder b(17);
  b.input("image", {1, 3, 35, 33})
      .weight("ws", {32, 3, 3, 3}, 1)
      .node("Conv", {"image", "ws"}, {"s"}, {{"strides", ints({2, 2})}})
      .node("Relu", {"s"}, {"sr"})
      .node("MaxPool", {"sr"}, {"p0"},
            {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"ceil_mode", int_attr(1)}});
  std::string v = "p0";
  int64_t c = 32;
  for (int f = 0; f < 2; ++f) {
    const std::string p = "f" + std::to_string(f);
    b.weight(p + "wq", {16, c, 1, 1}, 10 + 3 * f)
        .weight(p + "we1", {expand, 16, 1, 1}, 11 + 3 * f)
        .weight(p + "we3", {expand, 16, 3, 3}, 12 + 3 * f)
        .node("Conv", {v, p + "wq"}, {p + "q"})
        .node("Relu", {p + "q"}, {p + "qr"})
        .node("Conv", {p + "qr", p + "we1"}, {p + "e1"})
        .node("Relu", {p + "e1"}, {p + "e1r"})
        .node("Conv", {p + "qr", p + "we3"}, {p + "e3"}, {{"pads", ints({1, 1, 1, 1})}})
        .node("Relu", {p + "e3"}, {p + "e3r"})
        .node("Concat", {p + "e1r", p + "e3r"}, {p + "cat"}, {{"axis", int_attr(f == 0 ? 1 : -3)}});
    v = p + "cat";
    c = 2 * expand;
    if (f == 0) {
      b.node("MaxPool", {v}, {"p1"}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
      v = "p1";
    }
  }
  b.weight("wc", {48, c, 1, 1}, 30)
      .node("Conv", {v, "wc"}, {"cls"})
      .node("GlobalAveragePool", {"cls"}, {"y"})
      .output("y");
  return b;
}

TEST(ConvertToBlockedLayout, TakesMaxPoolsAndConcatsOfWholeBlocksIntoTheRun) {
  GraphBuilder b = fire_net(32);
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  ASSERT_TRUE(ir::verify(g));
  // One run from the plain image to the pooled output: no reorder at all.
  EXPECT_EQ(count_op(g, "BlockedConv"), 8);
  EXPECT_EQ(count_op(g, "BlockedMaxPool"), 2);
  EXPECT_EQ(count_op(g, "Concat"), 2);
  EXPECT_EQ(count_op(g, "BlockChannels") + count_op(g, "UnblockChannels"), 0);
  EXPECT_EQ(count_op(g, "MaxPool") + count_op(g, "Conv") + count_op(g, "FusedConv"), 0);
  for (const auto& n : g.nodes) {
    if (n.op_type == "Concat") {
      EXPECT_EQ(n.attrs.get_int("axis", 0), 1);
    }
  }
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 3, 35, 33}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);

  // Expands of 24 channels: the concatenation would put a half-empty block mid-tensor, so the
  // Concats stay NCHW and cut the run (each side reordered); the numbers still agree.
  GraphBuilder partial = fire_net(24);
  g = partial.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "Concat"), 2);
  for (const auto& n : g.nodes) {
    if (n.op_type != "Concat") continue;
    for (const std::string& in : n.inputs) EXPECT_EQ(in.find("_blocked"), std::string::npos) << in;
  }
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(partial.graph(), feeds)), 1e-5);
}

// densenet's block: x [1, 32, 28, 28] from outside the run, then `layers` layers of
// Concat(x, every earlier layer's output) -> BatchNormalization -> Relu -> 1x1 (-> 64) -> Relu
// -> 3x3 (-> 16); the block's output is the Concat of all. The first layer's "Concat" of x
// alone is what torch.cat of a one-tensor list exports.
GraphBuilder dense_block(int layers) {
  GraphBuilder b(17);
  b.input("x", {1, 32, 28, 28});
  std::vector<std::string> features = {"x"};
  int64_t c = 32;
  for (int l = 0; l < layers; ++l) {
    const std::string p = "d" + std::to_string(l);
    const uint32_t seed = 10 * static_cast<uint32_t>(l);
    b.node("Concat", features, {p + "cat"}, {{"axis", int_attr(1)}})
        .weight(p + "gamma", {c}, seed + 1)
        .weight(p + "beta", {c}, seed + 2)
        .weight(p + "mean", {c}, seed + 3)
        .weight(p + "var", {c}, seed + 4, 0.1f, 2.0f)
        .weight(p + "w1", {64, c, 1, 1}, seed + 5)
        .weight(p + "w2", {16, 64, 3, 3}, seed + 6)
        .node("BatchNormalization", {p + "cat", p + "gamma", p + "beta", p + "mean", p + "var"}, {p + "n"})
        .node("Relu", {p + "n"}, {p + "nr"})
        .node("Conv", {p + "nr", p + "w1"}, {p + "a"})
        .node("Relu", {p + "a"}, {p + "ar"})
        .node("Conv", {p + "ar", p + "w2"}, {p + "f"}, {{"pads", ints({1, 1, 1, 1})}});
    features.push_back(p + "f");
    c += 16;
  }
  b.node("Concat", features, {"y"}, {{"axis", int_attr(1)}}).output("y");
  return b;
}

TEST(ConvertToBlockedLayout, TakesADenseBlockWithItsNormalizationsAndConcats) {
  GraphBuilder b = dense_block(6);
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, false, true)));
  ASSERT_TRUE(ir::verify(g));
  // Per layer the normalization (as a depthwise 1x1 with the Relu), the 1x1 and the 3x3.
  EXPECT_EQ(count_op(g, "BlockedConv"), 18);
  EXPECT_EQ(count_op(g, "BatchNormalization") + count_op(g, "Relu") + count_op(g, "FusedConv"), 0);
  // Every Concat (the first layer's one-input Concat is gone) reads blocked values, x among
  // them: x is blocked once, however many Concats read it, and the run pays for that.
  EXPECT_EQ(count_op(g, "Concat"), 6);
  for (const auto& n : g.nodes) {
    if (n.op_type != "Concat") continue;
    for (const std::string& in : n.inputs) EXPECT_NE(in.find("_blocked"), std::string::npos) << in;
  }
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 1);
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 32, 28, 28}}, 5);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-4);
}

TEST(ConvertToBlockedLayout, PoolsAWideStemBlockedWithoutTakingAnUnpayingRunAlong) {
  // resnet's entry: 7x7/2 stem -> 3x3/2 MaxPool -> a bottleneck of 1x1s around a 64-channel
  // 3x3 that Winograd runs in NCHW. The stem and its pool run blocked (one reorder, after the
  // pool); the 1x1s, whose run would reorder as much as it computes, stay NCHW.
  GraphBuilder b(17);
  b.input("image", {1, 3, 64, 64})
      .weight("ws", {64, 3, 7, 7}, 1)
      .weight("w1", {64, 64, 1, 1}, 2)
      .weight("w2", {64, 64, 3, 3}, 3)
      .weight("w3", {256, 64, 1, 1}, 4)
      .weight("wd", {256, 64, 1, 1}, 5)
      .node("Conv", {"image", "ws"}, {"s"},
            {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}, {"kernel_shape", ints({7, 7})}})
      .node("Relu", {"s"}, {"sr"})
      .node("MaxPool", {"sr"}, {"p"},
            {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}})
      .node("Conv", {"p", "w1"}, {"a"})
      .node("Relu", {"a"}, {"ar"})
      .node("Conv", {"ar", "w2"}, {"c"}, {{"pads", ints({1, 1, 1, 1})}})
      .node("Relu", {"c"}, {"cr"})
      .node("Conv", {"cr", "w3"}, {"e"})
      .node("Conv", {"p", "wd"}, {"d"})
      .node("Add", {"e", "d"}, {"sum"})
      .node("Relu", {"sum"}, {"y"})
      .output("y");
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced(true, true)));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 1);
  EXPECT_EQ(count_op(g, "BlockedMaxPool"), 1);
  ASSERT_EQ(count_op(g, "UnblockChannels"), 1);
  for (const auto& n : g.nodes) {
    if (n.op_type == "UnblockChannels") {
      EXPECT_EQ(n.outputs, std::vector<std::string>{"p"});
    }
  }
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 3, 64, 64}}, 6);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test

namespace ignis::fuse_test {
namespace {

// A feature-pyramid step: x [1, 16, 12, 10] -> 1x1 (-> c) -> a -> 1x1 -> b; b pooled 2x2 ->
// 1x1 -> s -> Resize x2 (nearest, scales) -> + b -> Relu -> Resize to 24x20 (linear, sizes)
// -> 1x1 -> GlobalAveragePool -> y.
GraphBuilder pyramid(int64_t c) {
  GraphBuilder b(13);
  b.input("x", {1, 16, 12, 10});
  b.weight("w1", {c, 16, 1, 1}, 1)
      .weight("w2", {c, c, 1, 1}, 2)
      .weight("w3", {c, c, 1, 1}, 3)
      .weight("w4", {c, c, 1, 1}, 4)
      .constant("up2", Shape{4}, {1.0f, 1.0f, 2.0f, 2.0f})
      .ints_constant("to", {1, c, 24, 20})
      .node("Conv", {"x", "w1"}, {"a"})
      .node("Conv", {"a", "w2"}, {"b"})
      .node("MaxPool", {"b"}, {"p"}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}})
      .node("Conv", {"p", "w3"}, {"s"})
      .node("Resize", {"s", "", "up2"}, {"u"}, {{"mode", string_attr("nearest")}})
      .node("Add", {"u", "b"}, {"sum"})
      .node("Relu", {"sum"}, {"r"})
      .node("Resize", {"r", "", "", "to"}, {"l"}, {{"mode", string_attr("linear")}})
      .node("Conv", {"l", "w4"}, {"z"})
      .node("GlobalAveragePool", {"z"}, {"y"})
      .output("y");
  return b;
}

TEST(ConvertToBlockedLayout, TakesResizesAndElementwiseWorkOfWholeBlocksIntoTheRun) {
  GraphBuilder b = pyramid(32);
  ir::Graph g = b.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced()));
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_op(g, "BlockedConv"), 4);
  // One run: the image blocked once, the pool reading the last convolution blocked.
  EXPECT_EQ(count_op(g, "BlockChannels"), 1);
  EXPECT_EQ(count_op(g, "UnblockChannels"), 0);
  for (const auto& n : g.nodes) {
    if (n.op_type != "Resize" && n.op_type != "Add" && n.op_type != "Relu") continue;
    EXPECT_NE(n.inputs[0].find("_blocked"), std::string::npos) << n.op_type << " reads " << n.inputs[0];
    if (n.op_type == "Resize") {
      // The block axis added to the scales or sizes, unresized.
      const std::string& given = n.inputs[2].empty() ? n.inputs[3] : n.inputs[2];
      const Tensor* t = ir::constant_value(g, given);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->numel(), 5);
    }
  }
  const NamedTensors feeds = random_inputs(b.graph(), {{1, 16, 12, 10}}, 6);
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(b.graph(), feeds)), 1e-5);

  // 24 channels are not whole blocks: the Resizes, the Add and the Relu stay NCHW; the numbers
  // still agree.
  GraphBuilder partial = pyramid(24);
  g = partial.graph();
  ASSERT_TRUE(passes::optimize(g, passes::Level::All, forced()));
  ASSERT_TRUE(ir::verify(g));
  for (const auto& n : g.nodes) {
    if (n.op_type == "Resize" || n.op_type == "Add" || n.op_type == "Relu") {
      EXPECT_EQ(n.inputs[0].find("_blocked"), std::string::npos) << n.op_type;
    }
  }
  EXPECT_LT(relative_diff(run_as_is(g, feeds), run_as_is(partial.graph(), feeds)), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test
