// SPDX-License-Identifier: Apache-2.0
// fuse_qdq_into_qlinear: the QDQ form of a quantized Conv / MatMul / Gemm (as onnxruntime's
// quantize_static writes it) becomes QLinearConv / QLinearMatMul, with results within one
// quantization step of the QDQ graph's (the integer op rounds once, the QDQ graph rounds its
// float sums too); fuse_qdq_into_qlinear_add: the residual sum Q(Add(DQ(a), DQ(b)) [-> Relu])
// becomes com.microsoft QLinearAdd, again within one step, and fuse_qdq_into_qlinear_mul the
// product (a squeeze-excitation gate) QLinearMul; fuse_qdq_gemm_into_matmul_integer: a
// Gemm with bias, or a MatMul with a float output (and its bias Add), on quantized operands
// becomes ai.ignis MatMulIntegerToFloat;
// fuse_qdq_into_qlinear_global_average_pool: Q(GlobalAveragePool(DQ(x))) becomes com.microsoft
// QLinearGlobalAveragePool, within one step; and the cases they must leave alone.
#include <optional>
#include <tuple>

#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr int64_t kC = 5, kM = 7;
constexpr float kXScale = 0.02f, kYScale = 0.05f;

enum class Bias { None, Int32, Float };

struct Pattern {
  bool per_channel = true;
  Bias bias = Bias::Int32;
  bool relu = false;
  std::optional<std::pair<float, float>> clip = std::nullopt;  // Clip(min, max) in place of the Relu
  int y_zero_point = 128;
  bool conv_read_twice = false;
  std::string op = "Conv";  // or MatMul, Gemm (transB = 1)
};

// y = DQ(Q(op(DQ(Q(x)), DQ(w_q) [, bias]) [-> Relu])): x float, quantized uint8 at kXScale / 128,
// weights int8 (per output channel or per tensor), y uint8 at kYScale / y_zero_point.
ir::Graph qdq_graph(const Pattern& p) {
  const bool conv = p.op == "Conv", gemm = p.op == "Gemm";
  GraphBuilder b(13);
  if (conv) b.input("x", {1, kC, 6, 6});
  else b.input("x", {3, kC});
  b.scalar("xs", kXScale).scalar("ys", kYScale);
  const int64_t channels = kM;
  const Shape w_shape = conv ? Shape{kM, kC, 3, 3} : gemm ? Shape{kM, kC} : Shape{kC, kM};
  const Shape w_scale_shape = p.per_channel ? Shape{channels} : Shape{};
  b.weight("ws", w_scale_shape, 7, 0.004f, 0.01f);
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  std::vector<std::pair<std::string, Attribute>> w_axis;
  if (p.per_channel) w_axis = {{"axis", int_attr(conv || gemm ? 0 : 1)}};
  b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, w_axis);
  std::vector<std::string> inputs = {"xd", "wd"};
  if (p.bias == Bias::Int32) {
    inputs.push_back("bd");  // DQ(bq, bs), inserted below
  } else if (p.bias == Bias::Float) {
    b.weight("bf", {channels}, 9, -0.3f, 0.3f);
    inputs.push_back("bf");
  }
  std::vector<std::pair<std::string, Attribute>> attrs;
  if (conv) attrs = {{"pads", ints({1, 1, 1, 1})}};
  if (gemm) attrs = {{"transB", int_attr(1)}};
  const bool activation = p.relu || p.clip;
  b.node(p.op, inputs, {activation ? "pre" : "v"}, attrs);
  if (p.relu) b.node("Relu", {"pre"}, {"v"});
  if (p.clip) b.scalar("lo", p.clip->first).scalar("hi", p.clip->second).node("Clip", {"pre", "lo", "hi"}, {"v"});
  b.node("QuantizeLinear", {"v", "ys", "yz"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  b.output("y");
  if (p.conv_read_twice) b.node("Neg", {activation ? "pre" : "v"}, {"z"}).output("z");
  ir::Graph g = b.graph();
  g.initializers["xz"] = filled(DType::U8, Shape{}, 128);
  g.initializers["yz"] = filled(DType::U8, Shape{}, p.y_zero_point);
  g.initializers["wq"] = bytes(DType::I8, w_shape, 3, -127, 127);
  g.initializers["wz"] = filled(DType::I8, w_scale_shape, 0);
  if (p.bias == Bias::Int32) {
    // The bias DQ with scale x_scale * w_scale and no zero point, as the quantizers write it.
    const Tensor& ws = g.initializers["ws"];
    Tensor bs = Tensor::empty(DType::F32, ws.shape());
    for (int64_t i = 0; i < ws.numel(); ++i) bs.data_as<float>()[i] = kXScale * ws.data_as<float>()[i];
    g.initializers["bs"] = bs;
    Tensor bq = Tensor::empty(DType::I32, Shape{channels});
    for (int64_t i = 0; i < channels; ++i) bq.data_as<int32_t>()[i] = static_cast<int32_t>(i * 397 % 2001) - 1000;
    g.initializers["bq"] = bq;
    ir::Node dq;
    dq.name = "bias_dq";
    dq.op_type = "DequantizeLinear";
    dq.inputs = {"bq", "bs"};
    dq.outputs = {"bd"};
    if (p.per_channel) dq.attrs.set("axis", int_attr(0));
    g.nodes.insert(g.nodes.begin() + 3, dq);
  }
  return g;
}

int fused_count(const ir::Graph& g) { return count_ops(g, "QLinearConv", "") + count_ops(g, "QLinearMatMul", ""); }

std::vector<std::vector<int64_t>> input_shape(const Pattern& p) {
  return p.op == "Conv" ? std::vector<std::vector<int64_t>>{{1, kC, 6, 6}} : std::vector<std::vector<int64_t>>{{3, kC}};
}

TEST(FuseQdqIntoQLinear, RewritesQuantizedConvolutions) {
  for (bool per_channel : {true, false}) {
    for (Bias bias : {Bias::Int32, Bias::Float, Bias::None}) {
      const Pattern p{.per_channel = per_channel, .bias = bias};
      const ir::Graph g = qdq_graph(p);
      int n = 0;
      const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, g, &n);
      EXPECT_EQ(n, 1);
      const ir::Node* node = find_op(f, "QLinearConv", "");
      ASSERT_NE(node, nullptr);
      EXPECT_EQ(node->inputs.size(), bias == Bias::None ? 8u : 9u);
      EXPECT_EQ(node->inputs[0], "xq");
      EXPECT_EQ(node->inputs[3], "wq");
      if (bias == Bias::Int32) {
        EXPECT_EQ(node->inputs[8], "bq");  // the quantizer's int32 bias, as it is
      }
      EXPECT_EQ(node->attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
      EXPECT_EQ(count_ops(f, "Conv"), 0);
      EXPECT_EQ(count_ops(f, "QuantizeLinear"), 1);  // the input's
      // Within one step of y; the QDQ graph rounds its float sums, the integer op does not.
      EXPECT_LE(optimized_vs_plain(g, random_inputs(g, input_shape(p), 11), OptLevel::Extended), kYScale * 1.001);
    }
  }
}

TEST(FuseQdqIntoQLinear, FoldsReluOnlyWhenTheZeroPointClampsIt) {
  const Pattern at_min{.relu = true, .y_zero_point = 0};
  const ir::Graph g = qdq_graph(at_min);
  const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, g);
  EXPECT_EQ(fused_count(f), 1);
  EXPECT_EQ(count_ops(f, "Relu"), 0);
  EXPECT_LE(optimized_vs_plain(g, random_inputs(g, input_shape(at_min), 12), OptLevel::Extended), kYScale * 1.001);
  // With y's zero point at 128 the Relu clamps at y_zp, which QLinearConv cannot express.
  EXPECT_EQ(fused_count(run_pass(passes::fuse_qdq_into_qlinear, qdq_graph({.relu = true}))), 0);
}

TEST(FuseQdqIntoQLinear, FoldsClipOnlyWhenTheSaturationImpliesIt) {
  // y uint8 with zero point 0 represents [0, 255 * kYScale]. A Clip whose bounds lie on or
  // beyond that range (ReLU6 under a range calibrated after it) changes nothing and folds;
  // one that clamps inside it does not.
  const float top = 255.0f * kYScale;
  const std::vector<std::pair<float, float>> folds = {{0.0f, top}, {-10.0f * kYScale, 3.0f * top}};
  const std::vector<std::pair<float, float>> stays = {{0.0f, 200.0f * kYScale}, {5.0f * kYScale, top}};
  for (const auto& bounds : folds) {
    const Pattern p{.clip = bounds, .y_zero_point = 0};
    const ir::Graph g = qdq_graph(p);
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, g);
    EXPECT_EQ(fused_count(f), 1) << bounds.first << " " << bounds.second;
    EXPECT_EQ(count_ops(f, "Clip"), 0);
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, input_shape(p), 13), OptLevel::Extended), kYScale * 1.001);
  }
  for (const auto& bounds : stays) {
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, qdq_graph({.clip = bounds, .y_zero_point = 0}));
    EXPECT_EQ(fused_count(f), 0) << bounds.first << " " << bounds.second;
  }
  // With y's zero point at 128 even Clip(0, top) clamps inside y's range.
  EXPECT_EQ(fused_count(run_pass(passes::fuse_qdq_into_qlinear, qdq_graph({.clip = std::pair{0.0f, top}}))), 0);
}

TEST(FuseQdqIntoQLinear, RewritesMatMulAndTransposedGemm) {
  for (const char* op : {"MatMul", "Gemm"}) {
    for (bool per_channel : {true, false}) {
      const Pattern p{.per_channel = per_channel, .bias = Bias::None, .op = op};
      const ir::Graph g = qdq_graph(p);
      const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, g);
      const ir::Node* node = find_op(f, "QLinearMatMul", "");
      ASSERT_NE(node, nullptr) << op;
      EXPECT_EQ(count_ops(f, op), 0);
      const Tensor* b = ir::constant_value(f, node->inputs[3]);
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(b->shape(), (Shape{kC, kM})) << op;  // [K x N]: the Gemm's weights transposed
      EXPECT_LE(optimized_vs_plain(g, random_inputs(g, input_shape(p), 13), OptLevel::Extended), kYScale * 1.001) << op;
    }
  }
}

TEST(FuseQdqIntoQLinear, LeavesSharedOutputsGemmBiasAndDynamicWeights) {
  const ir::Graph shared = qdq_graph({.conv_read_twice = true});
  EXPECT_EQ(fused_count(run_pass(passes::fuse_qdq_into_qlinear, shared)), 0);
  EXPECT_EQ(fused_count(run_pass(passes::fuse_qdq_into_qlinear, qdq_graph({.bias = Bias::Float, .op = "Gemm"}))), 0);
  ir::Graph dynamic = qdq_graph({});
  dynamic.initializers.erase("wq");
  ValueInfo wq;
  wq.name = "wq";
  wq.dtype = DType::I8;
  wq.dims = {kM, kC, 3, 3};
  wq.dim_names.resize(4);
  wq.has_shape = true;
  dynamic.inputs.push_back(wq);
  EXPECT_EQ(fused_count(run_pass(passes::fuse_qdq_into_qlinear, dynamic)), 0);
}

// Attention's product, both operands activations: y = DQ(Q(MatMul(DQ(Q(a)), DQ(Q(b))))), a
// [2, 3, 4, 5] and b [2, 3, 5, 6] quantized per tensor (uint8, or int8 for b), y uint8. It
// becomes QLinearMatMul reading both quantized tensors, within one step of y; a b quantized per
// axis stays.
ir::Graph runtime_b_graph(DType b_type, bool per_axis_b) {
  GraphBuilder b(13);
  b.input("a", {2, 3, 4, 5}).input("b", {2, 3, 5, 6});
  b.scalar("as", 0.03f).scalar("ys", kYScale);
  b.weight("bs", per_axis_b ? Shape{6} : Shape{}, 5, 0.02f, 0.03f);
  b.node("QuantizeLinear", {"a", "as", "az"}, {"aq"}).node("DequantizeLinear", {"aq", "as", "az"}, {"ad"});
  std::vector<std::pair<std::string, Attribute>> axis;
  if (per_axis_b) axis = {{"axis", int_attr(3)}};
  b.node("QuantizeLinear", {"b", "bs", "bz"}, {"bq"}, axis).node("DequantizeLinear", {"bq", "bs", "bz"}, {"bd"}, axis);
  b.node("MatMul", {"ad", "bd"}, {"v"});
  b.node("QuantizeLinear", {"v", "ys", "yz"}, {"yq"}).node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  b.output("y");
  ir::Graph g = b.graph();
  g.initializers["az"] = filled(DType::U8, Shape{}, 120);
  g.initializers["bz"] = filled(b_type, per_axis_b ? Shape{6} : Shape{}, b_type == DType::U8 ? 131 : -3);
  g.initializers["yz"] = filled(DType::U8, Shape{}, 128);
  return g;
}

TEST(FuseQdqIntoQLinear, RewritesMatMulOfTwoQuantizedActivations) {
  for (DType t : {DType::U8, DType::I8}) {
    const ir::Graph g = runtime_b_graph(t, false);
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear, g);
    const ir::Node* node = find_op(f, "QLinearMatMul", "");
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->inputs[0], "aq");
    EXPECT_EQ(node->inputs[3], "bq");
    EXPECT_EQ(count_ops(f, "MatMul"), 0);
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{2, 3, 4, 5}, {2, 3, 5, 6}}, 17), OptLevel::Extended),
              kYScale * 1.001);
  }
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear, runtime_b_graph(DType::U8, true)), "QLinearMatMul", ""), 0);
}

// y = DQ(Q(Add(DQ(Q(a)), DQ(Q(b))) [-> Relu])): a and b quantized at their own scales and zero
// points (per tensor), y at kYScale / y_zero_point; the type of all three is `t`.
struct AddPattern {
  DType t = DType::U8;
  bool relu = false;
  int y_zero_point = 128;
  bool per_axis_b = false;  // b's scale per channel: no QLinearAdd form
  bool sum_read_twice = false;
  std::vector<int64_t> b_shape = {1, 4, 5, 6};
  std::string op = "Add";  // or Mul
};

ir::Graph qdq_add_graph(const AddPattern& p) {
  GraphBuilder b(13);
  b.input("a", {1, 4, 5, 6}).input("b", p.b_shape);
  b.scalar("as", 0.015f).scalar("ys", kYScale);
  b.weight("bs", p.per_axis_b ? Shape{4} : Shape{}, 5, 0.02f, 0.03f);
  b.node("QuantizeLinear", {"a", "as", "az"}, {"aq"});
  b.node("DequantizeLinear", {"aq", "as", "az"}, {"ad"});
  b.node("QuantizeLinear", {"b", "bs", "bz"}, {"bq"});
  b.node("DequantizeLinear", {"bq", "bs", "bz"}, {"bd"});
  b.node(p.op, {"ad", "bd"}, {p.relu ? "pre" : "v"});
  if (p.relu) b.node("Relu", {"pre"}, {"v"});
  b.node("QuantizeLinear", {"v", "ys", "yz"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  b.output("y");
  if (p.sum_read_twice) b.node("Neg", {p.relu ? "pre" : "v"}, {"z"}).output("z");
  ir::Graph g = b.graph();
  const bool s8 = p.t == DType::I8;
  g.initializers["az"] = filled(p.t, Shape{}, s8 ? -3 : 120);
  g.initializers["bz"] = filled(p.t, p.per_axis_b ? Shape{4} : Shape{}, s8 ? 5 : 131);
  g.initializers["yz"] = filled(p.t, Shape{}, p.y_zero_point);
  return g;
}

TEST(FuseQdqIntoQLinear, RewritesResidualAddsAndProducts) {
  // Add: a residual sum, with a broadcast operand. Mul: a squeeze-excitation gate [1, 4, 1, 1]
  // times its map, and two maps of one shape.
  const auto add_pass = passes::fuse_qdq_into_qlinear_add, mul_pass = passes::fuse_qdq_into_qlinear_mul;
  for (const auto& [op, pass, broadcast] : {std::tuple{"Add", add_pass, std::vector<int64_t>{4, 1, 1}},
                                           std::tuple{"Mul", mul_pass, std::vector<int64_t>{1, 4, 1, 1}}}) {
    for (DType t : {DType::U8, DType::I8}) {
      for (const auto& b_shape : {std::vector<int64_t>{1, 4, 5, 6}, broadcast}) {
        const int y_zp = t == DType::U8 ? 128 : 0;
        const AddPattern p{.t = t, .y_zero_point = y_zp, .b_shape = b_shape, .op = op};
        const ir::Graph g = qdq_add_graph(p);
        int n = 0;
        const ir::Graph f = run_pass(pass, g, &n);
        EXPECT_EQ(n, 1);
        const ir::Node* node = find_op(f, std::string("QLinear") + op, "com.microsoft");
        ASSERT_NE(node, nullptr);
        EXPECT_EQ(node->inputs, (std::vector<std::string>{"aq", "as", "az", "bq", "bs", "bz", "ys", "yz"}));
        EXPECT_EQ(f.opset("com.microsoft"), 1);
        EXPECT_EQ(count_ops(f, op), 0);
        EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 4, 5, 6}, b_shape}, 21), OptLevel::All),
                  kYScale * 1.001);
      }
    }
  }
  // Each fusion takes its own op only.
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_add, qdq_add_graph({.op = "Mul"})), "Mul"), 1);
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_mul, qdq_add_graph({})), "Add"), 1);
}

TEST(FuseQdqIntoQLinear, FoldsReluIntoResidualAddOnlyWhenTheZeroPointClampsIt) {
  for (DType t : {DType::U8, DType::I8}) {
    const AddPattern p{.t = t, .relu = true, .y_zero_point = t == DType::U8 ? 0 : -128};
    const ir::Graph g = qdq_add_graph(p);
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear_add, g);
    EXPECT_EQ(count_ops(f, "QLinearAdd", "com.microsoft"), 1);
    EXPECT_EQ(count_ops(f, "Relu"), 0);
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 4, 5, 6}, {1, 4, 5, 6}}, 22), OptLevel::All),
              kYScale * 1.001);
  }
  const ir::Graph mid = qdq_add_graph({.relu = true, .y_zero_point = 100});
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_add, mid), "QLinearAdd", "com.microsoft"), 0);
}

TEST(FuseQdqIntoQLinear, LeavesResidualAddsWithPerAxisScalesOrSharedSums) {
  // The level-Extended pass writes standard ONNX only.
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear, qdq_add_graph({})), "Add"), 1);
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_add, qdq_add_graph({.per_axis_b = true})), "QLinearAdd",
                      "com.microsoft"),
            0);
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_add, qdq_add_graph({.sum_read_twice = true})), "QLinearAdd",
                      "com.microsoft"),
            0);
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_mul, qdq_add_graph({.per_axis_b = true, .op = "Mul"})),
                      "QLinearMul", "com.microsoft"),
            0);
}

// y = DQ(Q(GlobalAveragePool(DQ(Q(x))))): x [1, 6, 7, 7] at 0.02 / x_zero_point, y at kYScale /
// y_zero_point, both of type `t`.
ir::Graph qdq_global_average_pool_graph(DType t, int x_zero_point, int y_zero_point, bool per_axis_x = false,
                                        bool map_read_twice = false) {
  GraphBuilder b(13);
  b.input("x", {1, 6, 7, 7});
  b.scalar("xs", 0.02f).scalar("ys", kYScale);
  if (per_axis_x) b.weight("cs", {6}, 4, 0.01f, 0.03f);
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  if (per_axis_x) b.node("DequantizeLinear", {"xq", "cs", "cz"}, {"xd"});
  else b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  b.node("GlobalAveragePool", {"xd"}, {"v"});
  b.node("QuantizeLinear", {"v", "ys", "yz"}, {"yq"});
  b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"});
  b.output("y");
  if (map_read_twice) b.node("Neg", {"xd"}, {"z"}).output("z");
  ir::Graph g = b.graph();
  g.initializers["xz"] = filled(t, Shape{}, x_zero_point);
  g.initializers["yz"] = filled(t, Shape{}, y_zero_point);
  if (per_axis_x) g.initializers["cz"] = filled(t, Shape{6}, x_zero_point);
  return g;
}

TEST(FuseQdqIntoQLinear, RewritesGlobalAveragePool) {
  for (DType t : {DType::U8, DType::I8}) {
    const ir::Graph g = qdq_global_average_pool_graph(t, t == DType::U8 ? 120 : -3, t == DType::U8 ? 131 : 4);
    int n = 0;
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear_global_average_pool, g, &n);
    EXPECT_EQ(n, 1);
    const ir::Node* node = find_op(f, "QLinearGlobalAveragePool", "com.microsoft");
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->inputs, (std::vector<std::string>{"xq", "xs", "xz", "ys", "yz"}));
    EXPECT_EQ(f.opset("com.microsoft"), 1);
    EXPECT_EQ(count_ops(f, "GlobalAveragePool"), 0);
    // Within one step of y: the integer sum requantized once against the float mean.
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 6, 7, 7}}, 23), OptLevel::All), kYScale * 1.001);
  }
  // The map the pool reads is also read elsewhere (a squeeze-excitation's Mul): the pool is
  // fused and the DequantizeLinear stays for the other reader.
  {
    const ir::Graph g = qdq_global_average_pool_graph(DType::U8, 120, 131, false, true);
    const ir::Graph f = run_pass(passes::fuse_qdq_into_qlinear_global_average_pool, g);
    EXPECT_EQ(count_ops(f, "QLinearGlobalAveragePool", "com.microsoft"), 1);
    EXPECT_EQ(count_ops(f, "DequantizeLinear"), 2);
    EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{1, 6, 7, 7}}, 25), OptLevel::All), kYScale * 1.001);
  }
  // Mixed types, per-axis input scales.
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_global_average_pool,
                               qdq_global_average_pool_graph(DType::U8, 128, 128, true)),
                      "QLinearGlobalAveragePool", "com.microsoft"),
            0);
  ir::Graph mixed = qdq_global_average_pool_graph(DType::U8, 128, 128);
  mixed.initializers["yz"] = filled(DType::I8, Shape{}, 0);
  EXPECT_EQ(count_ops(run_pass(passes::fuse_qdq_into_qlinear_global_average_pool, mixed), "QLinearGlobalAveragePool",
                      "com.microsoft"),
            0);
}

TEST(FuseQdqIntoQLinear, RewritesGemmWithBiasIntoMatMulIntegerToFloat) {
  for (Bias bias : {Bias::Int32, Bias::Float}) {
    for (bool per_channel : {true, false}) {
      const Pattern p{.per_channel = per_channel, .bias = bias, .op = "Gemm"};
      const ir::Graph g = qdq_graph(p);
      int n = 0;
      const ir::Graph f = run_pass(passes::fuse_qdq_gemm_into_matmul_integer, g, &n);
      EXPECT_EQ(n, 1);
      const ir::Node* node = find_op(f, "MatMulIntegerToFloat", "ai.ignis");
      ASSERT_NE(node, nullptr);
      ASSERT_EQ(node->inputs.size(), 6u);
      EXPECT_EQ(node->inputs[0], "xq");
      const Tensor* b = ir::constant_value(f, node->inputs[1]);
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(b->shape(), (Shape{kC, kM}));  // [K x N]: the Gemm's weights transposed
      EXPECT_EQ(count_ops(f, "Gemm"), 0);
      EXPECT_LE(optimized_vs_plain(g, random_inputs(g, input_shape(p), 14), OptLevel::All), kYScale * 1.001);
    }
  }
  // Without a bias the level-Extended pass makes QLinearMatMul of it; beta scales the bias.
  const auto rewrites = [](const ir::Graph& in) {
    int n = 0;
    run_pass(passes::fuse_qdq_gemm_into_matmul_integer, in, &n);
    return n;
  };
  EXPECT_EQ(rewrites(qdq_graph({.bias = Bias::None, .op = "Gemm"})), 0);
  ir::Graph beta = qdq_graph({.bias = Bias::Float, .op = "Gemm"});
  for (ir::Node& node : beta.nodes)
    if (node.op_type == "Gemm") node.attrs.set("beta", float_attr(0.5f));
  EXPECT_EQ(rewrites(beta), 0);
}

// A transformer projection as `ignis quantize` leaves it: MatMul(DQ(x_q), DQ(w_q)) [+ bias]
// with a float output (no QuantizeLinear after it), on a 3-D activation.
ir::Graph float_output_matmul(bool bias, bool per_channel) {
  GraphBuilder b(13);
  b.input("x", {2, 3, kC});
  b.scalar("xs", kXScale);
  const Shape w_scale_shape = per_channel ? Shape{kM} : Shape{};
  b.weight("ws", w_scale_shape, 7, 0.004f, 0.01f);
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  std::vector<std::pair<std::string, Attribute>> w_axis;
  if (per_channel) w_axis = {{"axis", int_attr(1)}};
  b.node("DequantizeLinear", {"wq", "ws", "wz"}, {"wd"}, w_axis);
  b.node("MatMul", {"xd", "wd"}, {bias ? "p" : "y"});
  if (bias) {
    b.weight("bf", {kM}, 9, -0.3f, 0.3f);
    b.node("Add", {"bf", "p"}, {"y"});
  }
  b.output("y");
  ir::Graph g = b.graph();
  g.initializers["xz"] = filled(DType::I8, Shape{}, -3);
  g.initializers["wq"] = bytes(DType::I8, Shape{kC, kM}, 3, -127, 127);
  g.initializers["wz"] = filled(DType::I8, w_scale_shape, 0);
  return g;
}

TEST(FuseQdqIntoQLinear, RewritesMatMulWithFloatOutputAndItsBiasIntoMatMulIntegerToFloat) {
  for (bool bias : {true, false}) {
    for (bool per_channel : {true, false}) {
      const ir::Graph g = float_output_matmul(bias, per_channel);
      int n = 0;
      const ir::Graph f = run_pass(passes::fuse_qdq_gemm_into_matmul_integer, g, &n);
      EXPECT_EQ(n, 1);
      const ir::Node* node = find_op(f, "MatMulIntegerToFloat", "ai.ignis");
      ASSERT_NE(node, nullptr);
      EXPECT_EQ(node->inputs[0], "xq");
      EXPECT_EQ(node->inputs.size(), bias ? 6u : 5u);
      EXPECT_EQ(node->outputs[0], "y");
      EXPECT_EQ(count_ops(f, "MatMul") + count_ops(f, "Add"), 0);
      // The exact integer sums scaled once against the float products of dequantized values:
      // float32 rounding apart, the same.
      EXPECT_LE(optimized_vs_plain(g, random_inputs(g, {{2, 3, kC}}, 21), OptLevel::All), 1e-4);
    }
  }
  // A bias Add that is not the MatMul's only reader stays, and the product is fused alone.
  ir::Graph shared = float_output_matmul(true, true);
  ir::Node neg;
  neg.op_type = "Neg";
  neg.inputs = {"p"};
  neg.outputs = {"z"};
  shared.nodes.push_back(neg);
  ValueInfo z;
  z.name = "z";
  z.dtype = DType::F32;
  shared.outputs.push_back(z);
  int n = 0;
  const ir::Graph f = run_pass(passes::fuse_qdq_gemm_into_matmul_integer, shared, &n);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(count_ops(f, "Add"), 1);
  const ir::Node* node = find_op(f, "MatMulIntegerToFloat", "ai.ignis");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->inputs.size(), 5u);
}

}  // namespace
}  // namespace ignis::fuse_test
