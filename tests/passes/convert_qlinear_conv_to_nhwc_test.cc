// SPDX-License-Identifier: Apache-2.0
// convert_qlinear_conv_to_nhwc: runs of QLinearConv (and the QLinearAdds joining them) ->
// ai.ignis QLinearConvNhwc between Transposes. The pass is forced on (it is off where the
// channels-last kernel is not the fast one), so the rewrite is checked on every machine; the
// converted graph must give the same outputs as the plain one, exactly (same integer sums,
// same requantization).
#include "passes/fuse_test_util.h"
#include "testing/op_runner.h"

namespace ignis::fuse_test {
namespace {

// The pass forced on, on a copy of `in`.
ir::Graph convert(const ir::Graph& in) {
  passes::PassContext ctx = runtime::make_pass_context();
  ctx.int8_channels_last = true;
  return run_pass(passes::convert_qlinear_conv_to_nhwc, in, ctx);
}

// QLinearConv `name` from `in` (channels cin) to `out` (cout), k x k, stride s, per-channel
// int8 weights with zero points 0 (as onnxruntime's quantize_static writes them), bias.
void qconv(GraphBuilder& b, ir::Graph& inits, const std::string& name, const std::string& in, const std::string& out,
           int64_t cin, int64_t cout, int64_t k, int64_t s, uint32_t seed) {
  inits.initializers[name + "_w"] = bytes(DType::I8, Shape{cout, cin, k, k}, seed, -127, 127);
  inits.initializers[name + "_wz"] = filled(DType::I8, Shape{cout}, 0);
  Tensor bias = Tensor::empty(DType::I32, Shape{cout});
  for (int64_t i = 0; i < cout; ++i) bias.data_as<int32_t>()[i] = static_cast<int32_t>((i * 37 + seed) % 2001) - 1000;
  inits.initializers[name + "_b"] = bias;
  b.weight(name + "_ws", {cout}, seed + 1, 0.002f, 0.006f);
  b.node("QLinearConv", {in, "s", "z", name + "_w", name + "_ws", name + "_wz", "s", "z", name + "_b"}, {out},
         {{"kernel_shape", testing::attr_ints({k, k})},
          {"strides", testing::attr_ints({s, s})},
          {"pads", testing::attr_ints({k / 2, k / 2, k / 2, k / 2})}});
}

// Input x (float, `dims`) quantized to uint8 xq at scale s, zero point z (in `inits`).
GraphBuilder quantized_input(ir::Graph& inits, std::vector<int64_t> dims) {
  GraphBuilder b(13);
  b.input("x", std::move(dims));
  b.scalar("s", 0.05f);
  inits.initializers["z"] = filled(DType::U8, Shape{}, 3);
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
  return b;
}

// The graph of `b` with the initializers of `inits`, QLinearAdds in onnxruntime's domain.
ir::Graph finish(const GraphBuilder& b, const ir::Graph& inits) {
  ir::Graph g = b.graph();
  for (auto& [k, v] : inits.initializers) g.initializers[k] = v;
  for (auto& n : g.nodes)
    if (n.op_type == "QLinearAdd") n.domain = "com.microsoft";
  g.opsets["com.microsoft"] = 1;
  return g;
}

// x (float) quantized to uint8, a bottleneck block of three convolutions (1x1, 3x3 stride
// `stride`, 1x1) plus a 1x1 shortcut, their QLinearAdd (sum), one more 3x3 convolution, and y
// dequantized; with add_output, one more convolution reads t5 and is dequantized as y2 (t5 is
// then read inside the run and outside it).
ir::Graph bottleneck(int64_t stride, bool add_output = false) {
  ir::Graph inits;
  GraphBuilder b = quantized_input(inits, {1, 16, 9, 11});
  // Wide enough inside that the run's work outweighs its two edge transposes (x, y).
  qconv(b, inits, "c1", "xq", "t1", 16, 32, 1, 1, 1);
  qconv(b, inits, "c2", "t1", "t2", 32, 32, 3, stride, 2);
  qconv(b, inits, "c3", "t2", "t3", 32, 64, 1, 1, 3);
  qconv(b, inits, "sc", "xq", "t4", 16, 64, 1, stride, 4);
  b.node("QLinearAdd", {"t3", "s", "z", "t4", "s", "z", "s", "z"}, {"sum"});
  qconv(b, inits, "c5", "sum", "t5", 64, 8, 3, 1, 5);
  b.node("DequantizeLinear", {"t5", "s", "z"}, {"y"}).output("y");
  if (add_output) {
    qconv(b, inits, "c6", "t5", "t6", 8, 8, 3, 1, 6);
    b.node("DequantizeLinear", {"t6", "s", "z"}, {"y2"}).output("y2");
  }
  return finish(b, inits);
}

void expect_same(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].shape(), b[o].shape());
    for (int64_t i = 0; i < a[o].numel(); ++i)
      ASSERT_EQ(a[o].data_as<float>()[i], b[o].data_as<float>()[i]) << "output " << o << " element " << i;
  }
}

TEST(ConvertQLinearConvToNhwc, KeepsARunOfQuantizedConvolutionsChannelsLast) {
  for (int64_t stride : {1, 2}) {
    const ir::Graph plain = bottleneck(stride);
    const ir::Graph g = convert(plain);
    ASSERT_TRUE(ir::verify(g));
    EXPECT_EQ(count_ops(g, "QLinearConvNhwc", "ai.ignis"), 5);
    EXPECT_EQ(count_ops(g, "QLinearConv"), 0);
    // xq in, t5 out: one Transpose each, however many nodes of the run read xq.
    EXPECT_EQ(count_ops(g, "Transpose"), 2);
    for (const auto& n : g.nodes) {
      if (n.op_type == "QLinearAdd") {
        EXPECT_EQ(n.outputs[0], "sum_nhwc");
      }
    }
    const NamedTensors feeds = random_inputs(plain, {{1, 16, 9, 11}}, 3);
    expect_same(run_as_is(g, feeds), run_as_is(plain, feeds));
  }
}

TEST(ConvertQLinearConvToNhwc, GivesValuesReadOutsideTheRunBackAsNchw) {
  const ir::Graph plain = bottleneck(1, /*add_output=*/true);
  const ir::Graph g = convert(plain);
  ASSERT_TRUE(ir::verify(g));
  EXPECT_EQ(count_ops(g, "QLinearConvNhwc", "ai.ignis"), 6);
  // t5 is read by c6 in the run and by the DequantizeLinear outside it: transposed back under
  // its own name (and t6 for its DequantizeLinear; xq in).
  EXPECT_EQ(count_ops(g, "Transpose"), 3);
  bool back = false;
  for (const auto& n : g.nodes) back |= n.op_type == "Transpose" && n.outputs[0] == "t5";
  EXPECT_TRUE(back);
  const NamedTensors feeds = random_inputs(plain, {{1, 16, 9, 11}}, 4);
  expect_same(run_as_is(g, feeds), run_as_is(plain, feeds));
}

TEST(ConvertQLinearConvToNhwc, LeavesTheGraphAloneWhenOff) {
  passes::PassContext ctx = runtime::make_pass_context();
  ctx.int8_channels_last = false;
  int rewrites = -1;
  const ir::Graph g = run_pass(passes::convert_qlinear_conv_to_nhwc, bottleneck(1), ctx, &rewrites);
  EXPECT_EQ(rewrites, 0);
  EXPECT_EQ(count_ops(g, "QLinearConv"), 5);
}

TEST(ConvertQLinearConvToNhwc, LeavesALoneConvolution) {
  ir::Graph inits;
  GraphBuilder b = quantized_input(inits, {1, 8, 6, 6});
  qconv(b, inits, "c1", "xq", "t1", 8, 8, 3, 1, 1);
  b.node("DequantizeLinear", {"t1", "s", "z"}, {"y"}).output("y");
  const ir::Graph out = convert(finish(b, inits));
  EXPECT_EQ(count_ops(out, "QLinearConvNhwc", "ai.ignis"), 0);
  EXPECT_EQ(count_ops(out, "Transpose"), 0);
}

}  // namespace
}  // namespace ignis::fuse_test
