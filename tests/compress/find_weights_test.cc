// SPDX-License-Identifier: Apache-2.0
// Which initializers quantization and pruning treat as weights, and the channel axis of each.
#include <gtest/gtest.h>

#include "compress/weights.h"
#include "passes/fuse_test_util.h"

namespace ignis {
namespace {

using fuse_test::GraphBuilder;
using fuse_test::int_attr;

std::map<std::string, int> axes(const std::vector<compress::WeightTensor>& ws) {
  std::map<std::string, int> m;
  for (const auto& w : ws) m[w.value] = w.channel_axis;
  return m;
}

bool mentions(const std::vector<std::string>& skipped, const std::string& prefix) {
  for (const auto& s : skipped)
    if (s.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(FindWeights, ChannelAxisPerOp) {
  GraphBuilder b;
  b.input("x", {1, 4, 8, 8})
      .weight("conv_w", Shape{6, 4, 3, 3}, 1)
      .weight("deconv_w", Shape{6, 5, 3, 3}, 2)
      .weight("mm_w", Shape{5, 7}, 3)
      .weight("gemm_w", Shape{7, 5}, 4)
      .weight("gemm_w2", Shape{7, 3}, 5)
      .node("Conv", {"x", "conv_w"}, {"c"})
      .node("ConvTranspose", {"c", "deconv_w"}, {"d"})
      .node("MatMul", {"d", "mm_w"}, {"m"})
      .node("Flatten", {"m"}, {"f"})
      .node("Gemm", {"f", "gemm_w"}, {"g"}, {{"transB", int_attr(1)}})
      .node("Gemm", {"g", "gemm_w2"}, {"h"})
      .output("h");
  std::vector<std::string> skipped;
  const auto found = axes(compress::find_weights(b.graph(), 0, &skipped));
  EXPECT_EQ(found, (std::map<std::string, int>{
                       {"conv_w", 0}, {"deconv_w", 1}, {"mm_w", 1}, {"gemm_w", 0}, {"gemm_w2", 1}}));
  EXPECT_TRUE(skipped.empty());
}

TEST(FindWeights, SharedGraphOutputAndSmallAreSkipped) {
  GraphBuilder b;
  b.input("x", {2, 8})
      .weight("shared", Shape{8, 8}, 1)      // also read by Add
      .weight("twice", Shape{8, 8}, 2)       // two MatMuls, same axis: fine
      .weight("exported", Shape{8, 8}, 3)    // a graph output
      .weight("tiny", Shape{8, 2}, 4)        // below min_elements
      .weight("activation_side", Shape{2, 8}, 5)  // MatMul's A operand: not a weight
      .ints_constant("shape", {2, 8})
      .node("MatMul", {"x", "shared"}, {"a"})
      .node("Add", {"a", "shared"}, {"b"})
      .node("MatMul", {"b", "twice"}, {"c"})
      .node("MatMul", {"c", "twice"}, {"d"})
      .node("MatMul", {"d", "exported"}, {"e"})
      .node("MatMul", {"e", "tiny"}, {"f"})
      .node("MatMul", {"activation_side", "e"}, {"g"})
      .node("Reshape", {"e", "shape"}, {"h"})
      .output("f")
      .output("g")
      .output("h")
      .output("exported");
  std::vector<std::string> skipped;
  const auto found = axes(compress::find_weights(b.graph(), 32, &skipped));
  EXPECT_EQ(found, (std::map<std::string, int>{{"twice", 1}}));
  EXPECT_TRUE(mentions(skipped, "shared: also read by node 'Add_1'")) << skipped.size();
  EXPECT_TRUE(mentions(skipped, "exported: is a graph output"));
  EXPECT_TRUE(mentions(skipped, "tiny: 16 elements, below the minimum of 32"));
  EXPECT_FALSE(mentions(skipped, "activation_side"));
  EXPECT_FALSE(mentions(skipped, "shape"));
}

TEST(FindWeights, ChannelSplitVisitsEveryElementOnce) {
  const ChannelSplit s(Shape{2, 3, 4}, 1);
  EXPECT_EQ(s.outer, 2);
  EXPECT_EQ(s.channels, 3);
  EXPECT_EQ(s.inner, 4);
  std::vector<int> seen(24, 0);
  std::vector<int64_t> channel_of(24, -1);
  s.for_each([&](int64_t c, int64_t i) {
    seen[static_cast<size_t>(i)]++;
    channel_of[static_cast<size_t>(i)] = c;
  });
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(seen[i], 1);
    EXPECT_EQ(channel_of[i], (i / 4) % 3);  // row-major [2, 3, 4]
  }
  const ChannelSplit whole = ChannelSplit::whole(Shape{2, 3, 4});
  EXPECT_EQ(whole.channels, 1);
  EXPECT_EQ(whole.inner, 24);
}

}  // namespace
}  // namespace ignis
