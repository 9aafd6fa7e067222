// SPDX-License-Identifier: Apache-2.0
// quantize_model and prune_model end to end: the written model, run through a Session, gives
// what the original graph gives with its weights replaced by values this test computes
// independently (symmetric int8 per channel, float16 rounding, magnitude pruning).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/half.h"
#include "ignis/compress.h"
#include "onnx/export.h"
#include "passes/fuse_test_util.h"

namespace ignis {
namespace {

using fuse_test::GraphBuilder;
using fuse_test::int_attr;
using fuse_test::ints;

// x[2, 3, 9, 9] -> Conv(6, 3x3) -> Relu -> Flatten -> Gemm(transB) -> MatMul -> y.
ir::Graph small_net() {
  GraphBuilder b;
  b.input("x", {2, 3, 9, 9})
      .weight("conv_w", Shape{6, 3, 3, 3}, 11)
      .weight("conv_b", Shape{6}, 12)
      .weight("fc_w", Shape{10, 294}, 13, -0.1f, 0.1f)
      .weight("proj_w", Shape{10, 5}, 14)
      .node("Conv", {"x", "conv_w", "conv_b"}, {"c"}, {{"pads", ints({0, 0, 0, 0})}})
      .node("Relu", {"c"}, {"r"})
      .node("Flatten", {"r"}, {"f"})
      .node("Gemm", {"f", "fc_w"}, {"g"}, {{"transB", int_attr(1)}})
      .node("MatMul", {"g", "proj_w"}, {"y"})
      .output("y");
  return b.graph();
}

// A file name of this test in this process: ctest runs the tests of this file as parallel
// processes, which must not write each other's files (a shared name made them flaky).
std::string temp_path(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? info->name() : "none";
  return (std::filesystem::temp_directory_path() /
          ("ignis_compress_" + std::to_string(::getpid()) + "_" + test + "_" + name))
      .string();
}

void write_graph(const ir::Graph& g, const std::string& path) {
  auto bytes = onnx_io::export_model(g);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  std::ofstream(path, std::ios::binary) << *bytes;
}

std::vector<float> run_file(const std::string& path, const NamedTensors& feeds) {
  SessionOptions o;
  o.threads = 1;
  auto s = Session::open(path, o);
  EXPECT_TRUE(s) << s.error().to_string();
  if (!s) return {};
  auto out = s->run(feeds);
  EXPECT_TRUE(out) << out.error().to_string();
  if (!out) return {};
  const Tensor& y = (*out)[0];
  return std::vector<float>(y.data_as<float>(), y.data_as<float>() + y.numel());
}

// The expected output: `g` with each listed weight transformed by `f` (in place on a copy).
template <class F>
std::vector<float> run_with_weights(ir::Graph g, const std::vector<std::string>& names, const NamedTensors& feeds, F f) {
  for (const auto& name : names) {
    Tensor& t = g.initializers.at(name);
    Tensor copy = Tensor::empty(DType::F32, t.shape());
    std::copy(t.data_as<float>(), t.data_as<float>() + t.numel(), copy.data_as<float>());
    f(name, copy);
    t = copy;
  }
  const std::string path = temp_path("expected.onnx");
  write_graph(g, path);
  return run_file(path, feeds);
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i]))) << i;
}

TEST(CompressModel, Int8PerChannelEqualsTheDequantizedWeights) {
  const ir::Graph g = small_net();
  const std::string src = temp_path("src.onnx"), out = temp_path("int8.onnx");
  write_graph(g, src);
  QuantizeOptions o;
  o.min_elements = 0;
  auto report = quantize_model(src, out, o);
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(report->changed.size(), 3u);  // conv_w (axis 0), fc_w (transB: axis 0), proj_w (axis 1)
  EXPECT_LT(report->file_bytes_after, report->file_bytes_before);

  const auto feeds = fuse_test::random_inputs(g, {{2, 3, 9, 9}}, 5);
  const auto want = run_with_weights(g, {"conv_w", "fc_w", "proj_w"}, feeds, [](const std::string& name, Tensor& t) {
    // Channels: conv_w [6, 27] and fc_w [10, 294] by row, proj_w [10, 5] by column.
    const bool by_column = name == "proj_w";
    const int64_t rows = t.shape()[0], cols = t.numel() / rows;
    float* w = t.data_as<float>();
    const int64_t channels = by_column ? cols : rows;
    for (int64_t ch = 0; ch < channels; ++ch) {
      auto at = [&](int64_t k) -> float& { return by_column ? w[k * cols + ch] : w[ch * cols + k]; };
      const int64_t n = by_column ? rows : cols;
      float m = 0.0f;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, std::fabs(at(k)));
      const float scale = m > 0.0f ? m / 127.0f : 1.0f;
      for (int64_t k = 0; k < n; ++k) at(k) = std::clamp(std::nearbyint(at(k) / scale), -127.0f, 127.0f) * scale;
    }
  });
  expect_near(run_file(out, feeds), want, 1e-5);
}

TEST(CompressModel, Fp16EqualsTheRoundedWeights) {
  const ir::Graph g = small_net();
  const std::string src = temp_path("src16.onnx"), out = temp_path("fp16.onnx");
  write_graph(g, src);
  QuantizeOptions o;
  o.mode = QuantizeMode::Fp16;
  o.min_elements = 100;  // proj_w (50 elements) stays float32
  auto report = quantize_model(src, out, o);
  ASSERT_TRUE(report) << report.error().to_string();
  ASSERT_EQ(report->changed.size(), 2u);
  const auto feeds = fuse_test::random_inputs(g, {{2, 3, 9, 9}}, 6);
  const auto want = run_with_weights(g, {"conv_w", "fc_w"}, feeds, [](const std::string&, Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = half_to_float(float_to_half(t.data_as<float>()[i]));
  });
  expect_near(run_file(out, feeds), want, 1e-6);
}

TEST(CompressModel, ElementPruningZeroesTheSmallestMagnitudes) {
  const ir::Graph g = small_net();
  const std::string src = temp_path("srcp.onnx"), out = temp_path("pruned.onnx");
  write_graph(g, src);
  PruneOptions o;
  o.sparsity = 0.4;
  o.min_elements = 0;
  auto report = prune_model(src, out, o);
  ASSERT_TRUE(report) << report.error().to_string();
  ASSERT_EQ(report->changed.size(), 3u);
  for (const auto& c : report->changed) EXPECT_EQ(c.zeros_after, std::llround(0.4 * static_cast<double>(c.elements))) << c.value;
  const auto feeds = fuse_test::random_inputs(g, {{2, 3, 9, 9}}, 7);
  const auto want = run_with_weights(g, {"conv_w", "fc_w", "proj_w"}, feeds, [](const std::string&, Tensor& t) {
    float* w = t.data_as<float>();
    std::vector<float> mag(w, w + t.numel());
    for (auto& v : mag) v = std::fabs(v);
    std::vector<float> sorted = mag;
    std::sort(sorted.begin(), sorted.end());
    const auto k = static_cast<size_t>(std::llround(0.4 * static_cast<double>(t.numel())));
    const float cut = sorted[k - 1];  // random weights: no ties at the cut
    for (int64_t i = 0; i < t.numel(); ++i)
      if (mag[static_cast<size_t>(i)] <= cut) w[i] = 0.0f;
  });
  expect_near(run_file(out, feeds), want, 1e-6);
}

// A source whose weights are memory-mapped external data: quantizing and pruning read them in
// place (a write would fault on the read-only mapping) and write what the single-file source
// gives; the reported input size counts the data file.
TEST(CompressModel, ExternalDataSourcesGiveTheSameModels) {
  const ir::Graph g = small_net();
  const std::string single = temp_path("single.onnx"), external = temp_path("external.onnx");
  write_graph(g, single);
  onnx_io::ExportOptions eo;
  eo.external_data_threshold = 0;
  auto files = onnx_io::export_model_file(g, external, eo);
  ASSERT_TRUE(files) << files.error().to_string();
  ASSERT_FALSE(files->data_path.empty());
  const auto feeds = fuse_test::random_inputs(g, {{2, 3, 9, 9}}, 8);
  QuantizeOptions q;
  q.min_elements = 0;
  PruneOptions p;
  p.min_elements = 0;
  for (const char* kind : {"int8", "pruned"}) {
    const std::string out_single = temp_path(std::string(kind) + "_single.onnx");
    const std::string out_external = temp_path(std::string(kind) + "_external.onnx");
    const bool quantize = std::string(kind) == "int8";
    auto a = quantize ? quantize_model(single, out_single, q) : prune_model(single, out_single, p);
    auto b = quantize ? quantize_model(external, out_external, q) : prune_model(external, out_external, p);
    ASSERT_TRUE(a) << a.error().to_string();
    ASSERT_TRUE(b) << b.error().to_string();
    EXPECT_EQ(b->file_bytes_before, files->model_bytes + files->data_bytes) << kind;
    EXPECT_EQ(run_file(out_external, feeds), run_file(out_single, feeds)) << kind;
    std::filesystem::remove(out_single);
    std::filesystem::remove(out_external);
  }
  std::filesystem::remove(single);
  std::filesystem::remove(external);
  std::filesystem::remove(files->data_path);
}

TEST(CompressModel, BadInputsAreClearErrors) {
  const std::string src = temp_path("srce.onnx");
  write_graph(small_net(), src);
  PruneOptions p;
  p.sparsity = 1.0;
  auto r = prune_model(src, temp_path("x.onnx"), p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().to_string().find("sparsity must be in [0, 1)"), std::string::npos);
  auto missing = quantize_model(temp_path("does_not_exist.onnx"), temp_path("x.onnx"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::NotFound);
  const std::string garbage = temp_path("garbage.onnx");
  std::ofstream(garbage, std::ios::binary) << "\x08\x07not a model\xff\xff";
  EXPECT_FALSE(quantize_model(garbage, temp_path("x.onnx")));

  ir::Graph old = small_net();
  old.opsets[""] = 9;  // DequantizeLinear needs opset 10
  const std::string old_path = temp_path("opset9.onnx");
  write_graph(old, old_path);
  auto refused = quantize_model(old_path, temp_path("x.onnx"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::Unsupported);
}

}  // namespace
}  // namespace ignis
