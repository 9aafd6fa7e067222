// SPDX-License-Identifier: Apache-2.0
// QuantizeMode::Dynamic: the graph it writes (one DynamicQuantizeLinear per activation, the
// MatMulInteger -> Cast -> Mul [-> Add] chain, int8 weights per column or per tensor) and its
// numerics: the quantized model stays within the error bound of the scheme, computed here
// from the float model's inputs and weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "compress/weights.h"
#include "ignis/compress.h"
#include "onnx/export.h"
#include "passes/fuse_test_util.h"

namespace ignis {
namespace {

using fuse_test::GraphBuilder;
using fuse_test::float_attr;
using fuse_test::int_attr;

std::string temp_path(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return (std::filesystem::temp_directory_path() /
          ("ignis_qdyn_" + std::to_string(::getpid()) + "_" + info->name() + "_" + name))
      .string();
}

// Writes `g`, quantizes it dynamically and reads the result back.
ir::Graph quantized(const ir::Graph& g, const QuantizeOptions& o, CompressReport* report = nullptr) {
  const std::string src = temp_path("src.onnx"), out = temp_path("out.onnx");
  auto bytes = onnx_io::export_model(g);
  EXPECT_TRUE(bytes) << bytes.error().to_string();
  if (!bytes) return {};
  std::ofstream(src, std::ios::binary) << *bytes;
  auto r = quantize_model(src, out, o);
  EXPECT_TRUE(r) << r.error().to_string();
  if (!r) return {};
  if (report) *report = *r;
  int64_t size = 0;
  auto back = compress::read_model_graph(out, &size);
  EXPECT_TRUE(back) << back.error().to_string();
  std::filesystem::remove(src);
  std::filesystem::remove(out);
  return back ? *back : ir::Graph{};
}

QuantizeOptions dynamic(int64_t min_elements = 0) {
  QuantizeOptions o;
  o.mode = QuantizeMode::Dynamic;
  o.min_elements = min_elements;
  return o;
}

const ir::Node* producer_of(const ir::Graph& g, const std::string& value) {
  for (const auto& n : g.nodes)
    if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
  return nullptr;
}

// x[3, 16] -> MatMul(wq), MatMul(wk) (one activation, two readers) -> Add -> s
// s -> Gemm(wg[12, 24], transB, C, alpha 0.5, beta 2) -> g -> Relu -> r
// r -> Gemm(transA) -> t;  r -> MatMul(small[12, 2]) -> u
ir::Graph net() {
  GraphBuilder b;
  b.input("x", {3, 16})
      .weight("wq", Shape{16, 24}, 1)
      .weight("wk", Shape{16, 24}, 2)
      .weight("wg", Shape{12, 24}, 3)
      .weight("bg", Shape{12}, 4)
      .weight("wt", Shape{3, 40}, 5)
      .weight("small", Shape{12, 2}, 6)
      .node("MatMul", {"x", "wq"}, {"q"})
      .node("MatMul", {"x", "wk"}, {"k"})
      .node("Add", {"q", "k"}, {"s"})
      .node("Gemm", {"s", "wg", "bg"}, {"g"},
            {{"transB", int_attr(1)}, {"alpha", float_attr(0.5f)}, {"beta", float_attr(2.0f)}})
      .node("Relu", {"g"}, {"r"})
      .node("Gemm", {"r", "wt"}, {"t"}, {{"transA", int_attr(1)}})
      .node("MatMul", {"r", "small"}, {"u"})
      .output("t")
      .output("u");
  return b.graph();
}

TEST(QuantizeDynamic, WritesOneDynamicQuantizeLinearPerActivationAndTheIntegerChain) {
  CompressReport report;
  const ir::Graph q = quantized(net(), dynamic(30), &report);
  // x feeds two MatMuls through one DynamicQuantizeLinear; s feeds the Gemm.
  EXPECT_EQ(fuse_test::count_ops(q, "DynamicQuantizeLinear"), 2);
  EXPECT_EQ(fuse_test::count_ops(q, "MatMulInteger"), 3);
  EXPECT_EQ(fuse_test::count_ops(q, "Gemm"), 1);    // transA=1 stays float
  EXPECT_EQ(fuse_test::count_ops(q, "MatMul"), 1);   // `small` has 24 elements, below 30
  for (const auto& n : q.nodes) {
    if (n.op_type != "MatMulInteger") continue;
    const ir::Node* dql = producer_of(q, n.inputs[0]);
    ASSERT_NE(dql, nullptr);
    EXPECT_EQ(dql->op_type, "DynamicQuantizeLinear");
    EXPECT_EQ(n.inputs[2], dql->outputs[2]);  // the activation's zero point
    const Tensor& w = q.initializers.at(n.inputs[1]);
    const Tensor& wz = q.initializers.at(n.inputs[3]);
    EXPECT_EQ(w.dtype(), DType::I8);
    EXPECT_EQ(wz.dtype(), DType::I8);
    EXPECT_EQ(wz.shape(), Shape{w.dim(1)});  // per column: [N]
    EXPECT_TRUE(std::all_of(wz.data_as<int8_t>(), wz.data_as<int8_t>() + wz.numel(), [](int8_t z) { return z == 0; }));
    // MatMulInteger -> Cast(to=float) -> Mul(., x_scale * w_scale)
    const ir::Node *cast = nullptr, *mul = nullptr;
    for (const auto& m : q.nodes) {
      if (m.op_type == "Cast" && m.inputs[0] == n.outputs[0]) cast = &m;
    }
    ASSERT_NE(cast, nullptr);
    EXPECT_EQ(cast->attrs.get_int("to"), 1);
    for (const auto& m : q.nodes)
      if (m.op_type == "Mul" && m.inputs[0] == cast->outputs[0]) mul = &m;
    ASSERT_NE(mul, nullptr);
    const ir::Node* scale = producer_of(q, mul->inputs[1]);
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ(scale->op_type, "Mul");
    EXPECT_EQ(scale->inputs[0], dql->outputs[1]);
    EXPECT_EQ(q.initializers.at(scale->inputs[1]).shape(), Shape{w.dim(1)});
  }
  // The Gemm's weight is stored transposed to [K, N] = [24, 12]; its bias comes after the Mul.
  const ir::Node* add = producer_of(q, "g");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op_type, "Add");
  EXPECT_TRUE(q.initializers.count("wg_transposed_quantized"));
  EXPECT_EQ(q.initializers.at("wg_transposed_quantized").shape(), (Shape{24, 12}));
  EXPECT_FALSE(q.initializers.count("wq"));  // the float weights are gone

  ASSERT_EQ(report.changed.size(), 3u);
  for (const auto& c : report.changed) EXPECT_EQ(c.scheme, "int8 dynamic per-column");
  auto mentions = [&](const std::string& s) {
    return std::any_of(report.skipped.begin(), report.skipped.end(),
                       [&](const std::string& k) { return k.find(s) != std::string::npos; });
  };
  EXPECT_TRUE(mentions("transA=1"));
  EXPECT_TRUE(mentions("24 elements, below the minimum of 30"));
}

TEST(QuantizeDynamic, PerTensorWritesScalarScalesAndZeroPoints) {
  QuantizeOptions o = dynamic();
  o.per_channel = false;
  const ir::Graph q = quantized(net(), o);
  int seen = 0;
  for (const auto& n : q.nodes) {
    if (n.op_type != "MatMulInteger") continue;
    EXPECT_EQ(q.initializers.at(n.inputs[3]).rank(), 0);
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(QuantizeDynamic, ExcludedNodesStayFloat) {
  QuantizeOptions o = dynamic();
  o.exclude_nodes = {"MatMul_0"};  // GraphBuilder names nodes <op>_<index>
  CompressReport report;
  const ir::Graph q = quantized(net(), o, &report);
  EXPECT_EQ(fuse_test::count_ops(q, "MatMulInteger"), 3);
  const ir::Node* kept = producer_of(q, "q");
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->op_type, "MatMul");
  EXPECT_EQ(kept->inputs[1], "wq");
  EXPECT_TRUE(std::any_of(report.skipped.begin(), report.skipped.end(), [](const std::string& s) {
    return s.find("'MatMul_0'") != std::string::npos && s.find("excluded") != std::string::npos;
  }));
}

// |y_q - y| for y = alpha * x @ W (+ bias) is at most alpha * sum_k (|x_k| dW_n + |W_kn| dx + dx dW_n)
// with dx = x_scale / 2 and dW_n = w_scale_n / 2, the two rounding errors; the scales are
// recomputed here from the definitions (DynamicQuantizeLinear's range includes 0).
void expect_within_bound(const ir::Graph& g, const Tensor& w_kn, float alpha, const std::vector<int64_t>& x_shape) {
  const auto feeds = fuse_test::random_inputs(g, {x_shape}, 17);
  const Tensor& x = feeds[0].second;
  const auto want = fuse_test::run_as_is(g, feeds);
  const auto got = fuse_test::run_as_is(quantized(g, dynamic()), feeds);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  const float* xp = x.data_as<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) lo = std::min(lo, xp[i]), hi = std::max(hi, xp[i]);
  const double dx = (hi - lo) / 255.0 / 2;
  const int64_t K = w_kn.dim(0), N = w_kn.dim(1), M = x.numel() / K;
  const float* w = w_kn.data_as<float>();
  const float* y = got[0].data_as<float>();
  const float* y_float = want[0].data_as<float>();
  double worst = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    double wmax = 0.0;
    for (int64_t k = 0; k < K; ++k) wmax = std::max(wmax, std::fabs(static_cast<double>(w[k * N + n])));
    const double dw = wmax / 127.0 / 2;
    for (int64_t m = 0; m < M; ++m) {
      double bound = 0.0;
      for (int64_t k = 0; k < K; ++k) bound += std::fabs(xp[m * K + k]) * dw + std::fabs(w[k * N + n]) * dx + dx * dw;
      bound *= alpha;
      const double err = std::fabs(static_cast<double>(y[m * N + n]) - y_float[m * N + n]);
      EXPECT_LE(err, bound * 1.001 + 1e-5) << "row " << m << " column " << n;
      worst = std::max(worst, err);
    }
  }
  EXPECT_GT(worst, 0.0);  // the weights and inputs are not exactly representable
}

TEST(QuantizeDynamic, MatMulStaysWithinTheQuantizationErrorBound) {
  GraphBuilder b;
  b.input("x", {2, 5, 37}).weight("w", Shape{37, 19}, 21).node("MatMul", {"x", "w"}, {"y"}).output("y");
  expect_within_bound(b.graph(), b.graph().initializers.at("w"), 1.0f, {2, 5, 37});
}

TEST(QuantizeDynamic, GemmWithTransBAlphaBetaStaysWithinTheBound) {
  GraphBuilder b;
  b.input("x", {4, 29})
      .weight("w", Shape{13, 29}, 22)
      .weight("c", Shape{13}, 23)
      .node("Gemm", {"x", "w", "c"}, {"y"},
            {{"transB", int_attr(1)}, {"alpha", float_attr(1.5f)}, {"beta", float_attr(-0.5f)}})
      .output("y");
  // The bound is over op(W) = Wᵀ, [K, N] = [29, 13].
  const Tensor& w = b.graph().initializers.at("w");
  Tensor wt = Tensor::empty(DType::F32, Shape{29, 13});
  for (int64_t n = 0; n < 13; ++n)
    for (int64_t k = 0; k < 29; ++k) wt.data_as<float>()[k * 13 + n] = w.data_as<float>()[n * 29 + k];
  expect_within_bound(b.graph(), wt, 1.5f, {4, 29});
}

TEST(QuantizeDynamic, BadRequestsAreClearErrors) {
  const std::string src = temp_path("src.onnx");
  std::ofstream(src, std::ios::binary) << *onnx_io::export_model(net());
  QuantizeOptions o = dynamic();
  o.exclude_nodes = {"MatMul_0", "no_such_node"};
  auto r = quantize_model(src, temp_path("x.onnx"), o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("no node named 'no_such_node'"), std::string::npos) << r.error().to_string();

  QuantizeOptions weights_only;
  weights_only.exclude_nodes = {"MatMul_0"};
  auto w = quantize_model(src, temp_path("x.onnx"), weights_only);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), StatusCode::InvalidArgument);

  ir::Graph old = net();
  old.opsets[""] = 10;  // DynamicQuantizeLinear arrived in opset 11
  const std::string old_path = temp_path("opset10.onnx");
  std::ofstream(old_path, std::ios::binary) << *onnx_io::export_model(old);
  auto refused = quantize_model(old_path, temp_path("x.onnx"), dynamic());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::Unsupported);
  EXPECT_NE(refused.error().to_string().find("opset >= 11"), std::string::npos);
  std::filesystem::remove(src);
  std::filesystem::remove(old_path);
}

}  // namespace
}  // namespace ignis
