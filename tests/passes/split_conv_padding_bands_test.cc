// SPDX-License-Identifier: Apache-2.0
// split_conv_padding_bands: a convolution whose taps read padding from most output rows (or
// columns) becomes Slice -> band convolution per band and a Concat, with the same outputs;
// convolutions where that saves little, that are small, or that it cannot read stay.
#include <limits>

#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

ir::Graph split(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::split_conv_padding_bands, b.graph(), rewrites);
}

// x [1, c, h, w] -> Conv(W [m, c, k, k], dilation d, pads p, stride s) -> y.
GraphBuilder atrous(int64_t c, int64_t m, int64_t h, int64_t w, int64_t k, int64_t d, int64_t p, int64_t s = 1) {
  GraphBuilder b(17);
  b.input("x", {1, c, h, w}).weight("w", Shape{m, c, k, k}, 1).weight("bias", Shape{m}, 2);
  b.node("Conv", {"x", "w", "bias"}, {"y"},
         {{"dilations", ints({d, d})}, {"pads", ints({p, p, p, p})}, {"strides", ints({s, s})}});
  return b.output("y");
}

int count_op(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op ? 1 : 0;
  return n;
}

void expect_same_outputs(const GraphBuilder& b, const ir::Graph& g, const std::vector<int64_t>& x) {
  EXPECT_LT(reference_runner::max_difference(b.graph(), g, random_inputs(b.graph(), {x}, 3)), 1e-4);
}

TEST(SplitConvPaddingBands, AtrousRate12On14x14BecomesThreeRowBands) {
  // DeepLabV3's geometry, fewer channels: rows 0-1 read taps 1-2, rows 2-11 tap 1, rows
  // 12-13 taps 0-1.
  const GraphBuilder b = atrous(256, 256, 14, 14, 3, 12, 12);
  int n = 0;
  const ir::Graph g = split(b, &n);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(count_op(g, "Conv"), 3);
  EXPECT_EQ(count_op(g, "Slice"), 3);
  ASSERT_EQ(count_op(g, "Concat"), 1);
  EXPECT_EQ(g.nodes.back().op_type, "Concat");
  EXPECT_EQ(g.nodes.back().outputs[0], "y");
  EXPECT_EQ(g.nodes.back().attrs.get_int("axis"), 2);
  std::vector<int64_t> heights;
  for (const auto& node : g.nodes)
    if (node.op_type == "Conv") {
      heights.push_back(g.initializers.at(node.inputs[1]).dim(2));
      EXPECT_EQ(node.attrs.get_ints("pads"), (std::vector<int64_t>{0, 12, 0, 12}));
    }
  EXPECT_EQ(heights, (std::vector<int64_t>{2, 1, 2}));
  expect_same_outputs(b, g, {1, 256, 14, 14});
}

TEST(SplitConvPaddingBands, NumericsOnOddGeometries) {
  struct Case {
    int64_t h, w, k, d, p, s;
  };
  // Odd sizes, dilation 6 to 12, kernels 3 and 5 (five bands), stride 2.
  for (const Case& c : {Case{11, 9, 3, 8, 8, 1}, Case{9, 13, 3, 9, 9, 1}, Case{13, 11, 5, 7, 14, 1},
                        Case{15, 15, 3, 12, 12, 2}, Case{10, 10, 3, 7, 7, 1}, Case{13, 13, 5, 6, 12, 1}}) {
    const GraphBuilder b = atrous(192, 160, c.h, c.w, c.k, c.d, c.p, c.s);
    int n = 0;
    const ir::Graph g = split(b, &n);
    EXPECT_EQ(n, 1) << c.h << "x" << c.w << " k" << c.k << " d" << c.d;
    expect_same_outputs(b, g, {1, 192, c.h, c.w});
  }
}

TEST(SplitConvPaddingBands, LeavesConvolutionsItShouldNot) {
  int n = 0;
  // A "same" 3x3 convolution: only the first and last rows lose a tap.
  split(atrous(256, 256, 14, 14, 3, 1, 1), &n);
  EXPECT_EQ(n, 0);
  // Worth splitting by taps, but small.
  split(atrous(8, 8, 14, 14, 3, 12, 12), &n);
  EXPECT_EQ(n, 0);
  // Unknown spatial size.
  GraphBuilder dynamic(17);
  dynamic.input("x", {1, 256, -1, -1}).weight("w", Shape{256, 256, 3, 3}, 1);
  dynamic.node("Conv", {"x", "w"}, {"y"}, {{"dilations", ints({12, 12})}, {"pads", ints({12, 12, 12, 12})}});
  split(dynamic.output("y"), &n);
  EXPECT_EQ(n, 0);
  // W not finite.
  std::vector<float> w(256 * 256 * 9, 0.25f);
  w[5] = std::numeric_limits<float>::quiet_NaN();
  GraphBuilder nan(17);
  nan.input("x", {1, 256, 14, 14}).constant("w", Shape{256, 256, 3, 3}, w);
  nan.node("Conv", {"x", "w"}, {"y"}, {{"dilations", ints({12, 12})}, {"pads", ints({12, 12, 12, 12})}});
  split(nan.output("y"), &n);
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace ignis::fuse_test
