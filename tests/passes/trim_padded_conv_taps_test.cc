// SPDX-License-Identifier: Apache-2.0
// trim_padded_conv_taps: taps of a dilated kernel that read only padding are cut from W and
// the pads lowered to match, with the same outputs; convolutions where that would need a
// negative pad, whose spatial size is unknown, or whose W is not a finite constant stay.
#include <limits>

#include "passes/fuse_test_util.h"
#include "passes/pass.h"
#include "passes/reference_runner.h"

namespace ignis::fuse_test {
namespace {

ir::Graph trimmed(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::trim_padded_conv_taps, b.graph(), rewrites);
}

// x [n, 4, h, w] -> Conv(W [6, 4, kh, kw], dilations, pads, strides) -> y.
GraphBuilder dilated_conv(std::vector<int64_t> x, std::vector<int64_t> kernel, std::vector<int64_t> dilations,
                          std::vector<int64_t> pads, std::vector<int64_t> strides = {1, 1}) {
  GraphBuilder b(17);
  std::vector<std::string> names(x.size());
  if (x[0] < 0) names[0] = "N";
  b.input("x", x, names).weight("w", Shape{6, 4, kernel[0], kernel[1]}, 1).weight("bias", Shape{6}, 2);
  b.node("Conv", {"x", "w", "bias"}, {"y"},
         {{"dilations", ints(std::move(dilations))}, {"pads", ints(std::move(pads))}, {"strides", ints(std::move(strides))}});
  return b.output("y");
}

void expect_same_outputs(const GraphBuilder& b, const ir::Graph& g, const std::vector<int64_t>& x) {
  EXPECT_LT(reference_runner::max_difference(b.graph(), g, random_inputs(b.graph(), {x}, 3)), 1e-5);
}

const Tensor& weights_of(const ir::Graph& g) { return g.initializers.at(g.nodes[0].inputs[1]); }

TEST(TrimPaddedConvTaps, AtrousRate36On14x14BecomesOneByOne) {
  const GraphBuilder b = dilated_conv({1, 4, 14, 14}, {3, 3}, {36, 36}, {36, 36, 36, 36});
  int n = 0;
  const ir::Graph g = trimmed(b, &n);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(weights_of(g).shape(), (Shape{6, 4, 1, 1}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("dilations"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.initializers.count("w"), 0u);
  // The centre taps, in order.
  const Tensor& w0 = b.graph().initializers.at("w");
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(weights_of(g).data_as<const float>()[i], w0.data_as<const float>()[i * 9 + 4]);
  expect_same_outputs(b, g, {1, 4, 14, 14});
}

TEST(TrimPaddedConvTaps, TrimsEachAxisOnItsOwn) {
  // Rows 10 high with dilation 12: only the centre row of taps reads input; columns 30 wide
  // keep all three. Batch symbolic: only the spatial sizes matter.
  const GraphBuilder b = dilated_conv({-1, 4, 10, 30}, {3, 3}, {12, 12}, {12, 12, 12, 12});
  const ir::Graph g = trimmed(b);
  EXPECT_EQ(weights_of(g).shape(), (Shape{6, 4, 1, 3}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{0, 12, 0, 12}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("dilations"), (std::vector<int64_t>{1, 12}));
  expect_same_outputs(b, g, {2, 4, 10, 30});
}

TEST(TrimPaddedConvTaps, TrimsOneSideOfAStridedAxis) {
  // Kernel 5 dilation 4, pads (8, 3) on 9 rows, stride 2: taps 0 and 1 read rows -8.. and
  // -4.., never inside from outputs 0..3; tap 4 reads 8 + 2*o, inside at o = 0.
  const GraphBuilder b = dilated_conv({1, 4, 9, 9}, {5, 1}, {4, 1}, {8, 0, 3, 0}, {2, 1});
  const ir::Graph g = trimmed(b);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(weights_of(g).shape(), (Shape{6, 4, 3, 1}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("pads"), (std::vector<int64_t>{0, 0, 3, 0}));
  expect_same_outputs(b, g, {1, 4, 9, 9});
}

TEST(TrimPaddedConvTaps, NumericsOnRandomDilatedGeometries) {
  struct Geometry {
    std::vector<int64_t> x, kernel, dilations, pads, strides;
  };
  const Geometry cases[] = {
      // Odd sizes, dilation 2 to 8; one or both axes trimmed, strides 1 and 2.
      {{1, 4, 4, 9}, {3, 3}, {5, 3}, {5, 3, 5, 3}, {1, 1}},
      {{2, 4, 5, 11}, {5, 3}, {3, 6}, {6, 6, 6, 6}, {1, 2}},
      {{1, 4, 6, 6}, {3, 3}, {7, 2}, {7, 2, 7, 2}, {2, 1}},
      {{1, 4, 7, 8}, {5, 3}, {4, 8}, {8, 8, 8, 8}, {1, 1}},
  };
  for (const Geometry& c : cases) {
    const GraphBuilder b = dilated_conv(c.x, c.kernel, c.dilations, c.pads, c.strides);
    int n = 0;
    const ir::Graph g = trimmed(b, &n);
    EXPECT_EQ(n, 1) << c.x[2] << "x" << c.x[3];
    expect_same_outputs(b, g, c.x);
  }
}

TEST(TrimPaddedConvTaps, LeavesConvolutionsItCannotTrim) {
  int n = 0;
  // Every tap reads input.
  trimmed(dilated_conv({1, 4, 14, 14}, {3, 3}, {2, 2}, {2, 2, 2, 2}), &n);
  EXPECT_EQ(n, 0);
  // Unknown spatial size.
  trimmed(dilated_conv({1, 4, -1, -1}, {3, 3}, {36, 36}, {36, 36, 36, 36}), &n);
  EXPECT_EQ(n, 0);
  // A new pad would be negative: pads 1 with dilation 6 on 4 rows (tap 0 never reads input,
  // but cutting it needs pad 1 - 6).
  trimmed(dilated_conv({1, 4, 4, 4}, {3, 3}, {6, 6}, {1, 1, 1, 1}), &n);
  EXPECT_EQ(n, 0);
  // W not finite: 0 * inf is NaN, so the padding taps are not zero terms.
  std::vector<float> w(6 * 4 * 9, 0.5f);
  w[0] = std::numeric_limits<float>::infinity();
  GraphBuilder inf(17);
  inf.input("x", {1, 4, 14, 14}).constant("w", Shape{6, 4, 3, 3}, w);
  inf.node("Conv", {"x", "w"}, {"y"}, {{"dilations", ints({36, 36})}, {"pads", ints({36, 36, 36, 36})}});
  trimmed(inf.output("y"), &n);
  EXPECT_EQ(n, 0);
  // auto_pad SAME_UPPER.
  GraphBuilder same(17);
  same.input("x", {1, 4, 5, 5}).weight("w", Shape{6, 4, 3, 3}, 1);
  same.node("Conv", {"x", "w"}, {"y"}, {{"dilations", ints({8, 8})}, {"auto_pad", string_attr("SAME_UPPER")}});
  trimmed(same.output("y"), &n);
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace ignis::fuse_test
