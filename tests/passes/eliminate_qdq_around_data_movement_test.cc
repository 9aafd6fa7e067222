// SPDX-License-Identifier: Apache-2.0
// eliminate_qdq_around_data_movement: DQ -> MaxPool / Reshape / Concat / ... -> Q with the same
// scale and zero point becomes the op on the quantized bytes, with outputs identical to the
// QDQ graph's (the rewrite is exact); and the cases it must leave alone: other parameters,
// per-axis ones, MaxPool's Indices read, a DequantizeLinear read twice, Resize's linear mode.
#include <cstring>
#include <string_view>

#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr float kScale = 0.03f;

Tensor random_bytes(DType t, const Shape& shape, uint32_t seed) {
  Tensor out = Tensor::empty(t, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  for (int64_t i = 0; i < out.numel(); ++i) static_cast<uint8_t*>(out.data())[i] = static_cast<uint8_t>(d(rng));
  return out;
}

struct Pattern {
  std::string op = "MaxPool";
  DType t = DType::U8;
  float y_scale = kScale;
  int x_zero_point = 128;
  int y_zero_point = 128;
  bool per_axis = false;       // the op's DQ with one scale per channel
  bool indices_read = false;   // MaxPool's Indices a graph output
  bool dq_read_twice = false;  // the op's DQ output also a graph output
  bool q_is_output = false;    // the op's Q output is the graph output (no DQ after it)
  std::string resize_mode = "nearest";
};

constexpr int64_t kChannels = 4;

// y = DQ(Q(op(DQ(Q(x, s, zx)), ...), ys, zy)): x float [1, 4, 6, 6] quantized at kScale.
ir::Graph qdq_graph(const Pattern& p) {
  GraphBuilder b(17);
  b.input("x", {1, kChannels, 6, 6});
  b.scalar("xs", kScale).scalar("ys", p.y_scale);
  if (p.per_axis) b.constant("cs", {kChannels}, {kScale, kScale, kScale, kScale});
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  if (p.per_axis) b.node("DequantizeLinear", {"xq", "cs", "cz"}, {"xd"}, {{"axis", int_attr(1)}});
  else b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  std::vector<std::string> outs = {"v"};
  if (p.op == "MaxPool") {
    if (p.indices_read) outs.push_back("idx");
    b.node("MaxPool", {"xd"}, outs,
           {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}});
  } else if (p.op == "Reshape") {
    b.ints_constant("shape", {1, kChannels, 36});
    b.node("Reshape", {"xd", "shape"}, outs);
  } else if (p.op == "Transpose") {
    b.node("Transpose", {"xd"}, outs, {{"perm", ints({0, 2, 3, 1})}});
  } else if (p.op == "Slice") {
    b.ints_constant("starts", {1, 0}).ints_constant("ends", {5, 6}).ints_constant("axes", {2, 3});
    b.node("Slice", {"xd", "starts", "ends", "axes"}, outs);
  } else if (p.op == "Concat") {
    // The same quantized tensor through a second DQ of equal parameters (own initializers).
    b.scalar("xs2", kScale);
    b.node("DequantizeLinear", {"xq", "xs2", "xz2"}, {"xd2"});
    b.node("Concat", {"xd", "xd2"}, outs, {{"axis", int_attr(1)}});
  } else if (p.op == "Resize") {
    b.constant("scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f});
    b.node("Resize", {"xd", "", "scales"}, outs, {{"mode", string_attr(p.resize_mode)}});
  } else if (p.op == "DepthToSpace" || p.op == "SpaceToDepth") {
    b.node(p.op, {"xd"}, outs, {{"blocksize", int_attr(2)}});
  } else if (p.op == "Squeeze" || p.op == "Unsqueeze") {
    b.ints_constant("axes", {0});
    b.node(p.op, {"xd", "axes"}, outs);
  } else {
    b.node(p.op, {"xd"}, outs);
  }
  b.node("QuantizeLinear", {"v", "ys", "yz"}, {"yq"});
  if (p.q_is_output) {
    b.output("yq");
  } else {
    b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
    b.output("y");
  }
  if (p.indices_read) b.output("idx");
  if (p.dq_read_twice) b.output("xd");
  ir::Graph g = b.graph();
  g.initializers["xz"] = filled(p.t, Shape{}, p.x_zero_point);
  g.initializers["xz2"] = filled(p.t, Shape{}, p.x_zero_point);
  g.initializers["yz"] = filled(p.t, Shape{}, p.y_zero_point);
  if (p.per_axis) g.initializers["cz"] = filled(p.t, Shape{kChannels}, p.x_zero_point);
  return g;
}

// The level-All pipeline on a copy of `in` with the pass `skip` left out, in rounds until
// nothing changes (as passes::optimize runs it).
ir::Graph optimized_without(const ir::Graph& in, std::string_view skip) {
  ir::Graph g = in;
  const auto ctx = runtime::make_pass_context();
  for (int round = 0, changed = 1; round < 4 && changed; ++round) {
    changed = 0;
    for (const passes::Pass& p : passes::pipeline()) {
      if (p.name == skip) continue;
      auto n = p.run(g, ctx);
      EXPECT_TRUE(n) << n.error().to_string();
      changed += n ? *n : 0;
    }
  }
  return g;
}

int rewrites(const ir::Graph& g) {
  int n = 0;
  run_pass(passes::eliminate_qdq_around_data_movement, g, &n);
  return n;
}

// Every output of `a` equals `b`'s, bit for bit.
void expect_identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].dtype(), b[i].dtype());
    ASSERT_EQ(a[i].shape(), b[i].shape());
    const size_t bytes = static_cast<size_t>(a[i].numel()) * dtype_size(a[i].dtype());
    EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), bytes), 0) << "output " << i;
  }
}

TEST(EliminateQdqAroundDataMovement, RunsTheOpOnTheQuantizedValues) {
  for (const char* op : {"MaxPool", "Reshape", "Flatten", "Transpose", "Identity", "Slice", "Concat", "Resize",
                         "DepthToSpace", "SpaceToDepth", "Squeeze", "Unsqueeze"}) {
    for (DType t : {DType::U8, DType::I8}) {
      const int zp = t == DType::U8 ? 131 : -7;
      for (bool q_is_output : {false, true}) {
        const Pattern p{.op = op, .t = t, .x_zero_point = zp, .y_zero_point = zp, .q_is_output = q_is_output};
        const ir::Graph g = qdq_graph(p);
        int n = 0;
        const ir::Graph f = run_pass(passes::eliminate_qdq_around_data_movement, g, &n);
        EXPECT_EQ(n, 1) << op;
        const ir::Node* moved = find_op(f, op, "");
        ASSERT_NE(moved, nullptr) << op;
        EXPECT_EQ(moved->inputs[0], "xq") << op;
        if (p.op == "Concat") {
          EXPECT_EQ(moved->inputs[1], "xq");
        }
        EXPECT_EQ(moved->outputs, std::vector<std::string>{"yq"}) << op;
        EXPECT_EQ(count_ops(f, "QuantizeLinear"), 1) << op;  // x's
        EXPECT_EQ(count_ops(f, "DequantizeLinear"), q_is_output ? 0 : 1) << op;
        // Exact: the same bytes (or floats after the last DequantizeLinear) as the QDQ graph.
        const auto feeds = random_inputs(g, {{1, kChannels, 6, 6}}, 31);
        expect_identical(run_as_is(f, feeds), run_as_is(g, feeds));
      }
    }
  }
}

// Q(DQ(x_q)) at the same parameters with nothing between them (a Reshape to the shape its
// input has, dropped as a no-op, leaves this): x_q, exactly.
TEST(EliminateQdqAroundDataMovement, DropsABarePair) {
  for (DType t : {DType::U8, DType::I8}) {
    const int zp = t == DType::U8 ? 131 : -7;
    const Pattern p{.op = "Reshape", .t = t, .x_zero_point = zp, .y_zero_point = zp};
    ir::Graph g = qdq_graph(p);
    g.initializers["shape"] = Tensor::empty(DType::I64, Shape{4});
    const int64_t same[4] = {1, kChannels, 6, 6};
    std::memcpy(g.initializers["shape"].data(), same, sizeof(same));
    const ir::Graph f = optimized_without(g, "");
    EXPECT_EQ(count_ops(f, "Reshape"), 0);
    EXPECT_EQ(count_ops(f, "QuantizeLinear"), 1);  // x's
    EXPECT_EQ(count_ops(f, "DequantizeLinear"), 1);  // y's
    const auto feeds = random_inputs(g, {{1, kChannels, 6, 6}}, 7);
    expect_identical(run_as_is(f, feeds), run_as_is(g, feeds));
  }
  // Other parameters: a requantization, left alone.
  GraphBuilder b(17);
  b.input("x", {1, 4});
  b.scalar("s", kScale).scalar("s2", kScale * 2);
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}).node("DequantizeLinear", {"xq", "s", "z"}, {"xd"});
  b.node("QuantizeLinear", {"xd", "s2", "z"}, {"yq"});
  b.output("yq");
  ir::Graph g = b.graph();
  g.initializers["z"] = filled(DType::U8, Shape{}, 128);
  EXPECT_EQ(rewrites(g), 0);
}

TEST(EliminateQdqAroundDataMovement, DropsAnUnreadIndicesOutput) {
  ir::Graph g = qdq_graph({});
  for (ir::Node& n : g.nodes)
    if (n.op_type == "MaxPool") n.outputs.push_back("unread");
  const ir::Graph f = run_pass(passes::eliminate_qdq_around_data_movement, g);
  const ir::Node* pool = find_op(f, "MaxPool", "");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->outputs, std::vector<std::string>{"yq"});
}

TEST(EliminateQdqAroundDataMovement, LeavesInexactOrSharedPatterns) {
  EXPECT_EQ(rewrites(qdq_graph({.y_scale = kScale * 1.0001f})), 0);  // a requantization
  EXPECT_EQ(rewrites(qdq_graph({.y_zero_point = 127})), 0);
  EXPECT_EQ(rewrites(qdq_graph({.per_axis = true})), 0);
  EXPECT_EQ(rewrites(qdq_graph({.indices_read = true})), 0);
  EXPECT_EQ(rewrites(qdq_graph({.dq_read_twice = true})), 0);
  EXPECT_EQ(rewrites(qdq_graph({.op = "Resize", .resize_mode = "linear"})), 0);  // new values
  EXPECT_EQ(rewrites(qdq_graph({.op = "Relu"})), 0);  // not a data-movement op
  // Concat with one input at other parameters.
  ir::Graph mixed = qdq_graph({.op = "Concat"});
  Tensor other = Tensor::empty(DType::F32, Shape{});
  other.data_as<float>()[0] = kScale * 2;
  mixed.initializers["xs2"] = other;
  EXPECT_EQ(rewrites(mixed), 0);
  // MaxPool before opset 12 takes no uint8.
  ir::Graph old = qdq_graph({});
  old.opsets[""] = 11;
  EXPECT_EQ(rewrites(old), 0);
}

// A ResNet-style QDQ chain (int8 weights): Conv -> Relu -> MaxPool -> Conv -> Add -> GlobalAveragePool ->
// Flatten -> Gemm, quantized as onnxruntime writes it (MaxPool and Flatten keep their input's
// parameters). With the pass the whole pipeline gives the same outputs as without it.
TEST(EliminateQdqAroundDataMovement, ResNetStyleChainIsUnchanged) {
  GraphBuilder b(17);
  b.input("x", {1, 3, 12, 12});
  b.scalar("s0", 0.02f).scalar("s1", 0.05f).scalar("s2", 0.04f).scalar("s3", 0.03f);
  b.scalar("ws", 0.004f);
  b.weight("wf", {10, 8}, 7, -0.5f, 0.5f).weight("bf", {10}, 8);
  b.node("QuantizeLinear", {"x", "s0", "z"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "s0", "z"}, {"xd"});
  b.node("DequantizeLinear", {"w1q", "ws", "wz"}, {"w1"});
  b.node("DequantizeLinear", {"w2q", "ws", "wz"}, {"w2"});
  b.node("Conv", {"xd", "w1"}, {"c1"}, {{"pads", ints({1, 1, 1, 1})}});
  b.node("Relu", {"c1"}, {"r1"});
  b.node("QuantizeLinear", {"r1", "s1", "z"}, {"r1q"});
  b.node("DequantizeLinear", {"r1q", "s1", "z"}, {"r1d"});
  b.node("MaxPool", {"r1d"}, {"p"}, {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}});
  b.node("QuantizeLinear", {"p", "s1", "z"}, {"pq"});
  b.node("DequantizeLinear", {"pq", "s1", "z"}, {"pd"});
  b.node("DequantizeLinear", {"pq", "s1", "z"}, {"pd2"});
  b.node("Conv", {"pd", "w2"}, {"c2"}, {{"pads", ints({1, 1, 1, 1})}});
  b.node("QuantizeLinear", {"c2", "s2", "z"}, {"c2q"});
  b.node("DequantizeLinear", {"c2q", "s2", "z"}, {"c2d"});
  b.node("Add", {"c2d", "pd2"}, {"a"});
  b.node("QuantizeLinear", {"a", "s3", "z"}, {"aq"});
  b.node("DequantizeLinear", {"aq", "s3", "z"}, {"ad"});
  b.node("GlobalAveragePool", {"ad"}, {"gap"});
  b.node("QuantizeLinear", {"gap", "s3", "z"}, {"gq"});
  b.node("DequantizeLinear", {"gq", "s3", "z"}, {"gd"});
  b.node("Flatten", {"gd"}, {"fl"});
  b.node("QuantizeLinear", {"fl", "s3", "z"}, {"fq"});
  b.node("DequantizeLinear", {"fq", "s3", "z"}, {"fd"});
  b.node("Gemm", {"fd", "wf", "bf"}, {"y"}, {{"transB", int_attr(1)}});
  b.output("y");
  ir::Graph g = b.graph();
  g.initializers["z"] = filled(DType::U8, Shape{}, 0);
  g.initializers["wz"] = filled(DType::I8, Shape{}, 0);
  g.initializers["w1q"] = random_bytes(DType::I8, {8, 3, 3, 3}, 5);
  g.initializers["w2q"] = random_bytes(DType::I8, {8, 8, 3, 3}, 6);
  const auto feeds = random_inputs(g, {{1, 3, 12, 12}}, 41);
  EXPECT_EQ(rewrites(g), 2);  // MaxPool, Flatten
  expect_identical(run_as_is(run_pass(passes::eliminate_qdq_around_data_movement, g), feeds), run_as_is(g, feeds));
  // The whole pipeline at level All with and without the pass: the same bits out of the
  // final Gemm (its operands' bytes are the same either way).
  const ir::Graph with = optimized(g, passes::Level::All);
  EXPECT_EQ(count_ops(with, "QuantizeLinear"), 1);  // x's
  const ir::Graph without = optimized_without(g, "eliminate_qdq_around_data_movement");
  EXPECT_EQ(count_ops(without, "QuantizeLinear"), 3);  // and around MaxPool and Flatten
  expect_identical(run_as_is(with, feeds), run_as_is(without, feeds));
}

}  // namespace
}  // namespace ignis::fuse_test
