// SPDX-License-Identifier: Apache-2.0
// export_model_file: past the size threshold, large weights go to an external data file that
// ONNX readers (and ignis' importer, in place) accept; rewriting the model being read is safe.
#include "onnx/export.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "ignis/session.h"
#include "onnx/import.h"
#include "testing/temp_dir.h"
#include "testing/model_builder.h"

namespace ignis::onnx_io {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kK = 300, kN = 40;

// y = MatMul(x, W) + A: W is 48000 bytes, A 160 (under external_min_bytes, so it stays inline).
ir::Graph matmul_add_graph(float scale) {
  std::vector<float> w(kK * kN), a(kN);
  for (size_t i = 0; i < w.size(); ++i) w[i] = scale * (static_cast<float>(i % 97) - 48.0f) / 64.0f;
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.125f * static_cast<float>(i);
  testing::ModelBuilder b;
  b.input("x", DType::F32, {2, kK})
      .initializer_f32("W", {kK, kN}, w)
      .initializer_f32("A", {kN}, a)
      .node("MatMul", {"x", "W"}, {"m"})
      .node("Add", {"m", "A"}, {"y"})
      .output("y", DType::F32);
  const std::string bytes = b.bytes();
  auto g = import_model(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "");
  EXPECT_TRUE(g) << g.error().to_string();
  return std::move(*g);
}

using testing::TempDir;

onnx::ModelProto read_proto(const fs::path& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  return m;
}

std::map<std::string, std::string> external_keys(const onnx::TensorProto& t) {
  std::map<std::string, std::string> kv;
  for (const auto& e : t.external_data()) kv[e.key()] = e.value();
  return kv;
}

Tensor run(const std::string& path) {
  auto s = Session::open(path);
  EXPECT_TRUE(s) << s.error().to_string();
  if (!s) return {};
  Tensor x = Tensor::empty(DType::F32, {2, kK});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.01f * static_cast<float>(i % 53) - 0.25f;
  auto out = s->run({{"x", x}});
  EXPECT_TRUE(out) << out.error().to_string();
  return out ? (*out)[0] : Tensor();
}

TEST(ExportModelFile, SmallModelsStayInOneFile) {
  TempDir dir("ignis_export_small");
  const ir::Graph g = matmul_add_graph(1.0f);
  auto files = export_model_file(g, (dir.path() / "m.onnx").string());
  ASSERT_TRUE(files) << files.error().to_string();
  EXPECT_TRUE(files->data_path.empty());
  EXPECT_FALSE(fs::exists(dir.path() / "m.onnx.data"));
  const auto m = read_proto(dir.path() / "m.onnx");
  for (const auto& t : m.graph().initializer()) EXPECT_NE(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
  EXPECT_EQ(files->model_bytes, static_cast<int64_t>(fs::file_size(dir.path() / "m.onnx")));
}

TEST(ExportModelFile, LargeWeightsGoToAlignedExternalData) {
  TempDir dir("ignis_export_external");
  const ir::Graph g = matmul_add_graph(1.0f);
  const std::string single = (dir.path() / "single.onnx").string();
  ASSERT_TRUE(export_model_file(g, single));
  ExportOptions options;
  options.external_data_threshold = 1000;  // W and A together are 48160 bytes
  const std::string path = (dir.path() / "m.onnx").string();
  auto files = export_model_file(g, path, options);
  ASSERT_TRUE(files) << files.error().to_string();
  EXPECT_EQ(files->data_path, (dir.path() / "m.onnx.data").string());
  EXPECT_EQ(files->data_bytes, static_cast<int64_t>(fs::file_size(files->data_path)));
  EXPECT_EQ(files->data_bytes, kK * kN * 4);

  const auto m = read_proto(path);
  ASSERT_EQ(m.graph().initializer_size(), 2);
  for (const auto& t : m.graph().initializer()) {
    if (t.name() == "A") {
      EXPECT_NE(t.data_location(), onnx::TensorProto::EXTERNAL);
      EXPECT_EQ(t.raw_data().size(), kN * 4u);
      continue;
    }
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_FALSE(t.has_raw_data());
    auto kv = external_keys(t);
    EXPECT_EQ(kv["location"], "m.onnx.data");
    EXPECT_EQ(std::stoll(kv["offset"]) % 64, 0);
    EXPECT_EQ(kv["length"], std::to_string(kK * kN * 4));
  }
  // Nothing left behind under temporary names.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 3);

  const Tensor want = run(single), got = run(path);
  ASSERT_EQ(got.nbytes(), want.nbytes());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
}

// `ignis optimize m.onnx -o m.onnx`: the graph being written reads the old data file through
// its mapping. The new files replace the old ones by rename, so the mapping keeps the old
// bytes (truncating in place would change them under it, or fault).
TEST(ExportModelFile, RewritingTheModelBeingReadIsSafe) {
  TempDir dir("ignis_export_rewrite");
  ExportOptions options;
  options.external_data_threshold = 0;
  const std::string path = (dir.path() / "m.onnx").string();
  ASSERT_TRUE(export_model_file(matmul_add_graph(1.0f), path, options));
  auto old_graph = import_model_file(path, dir.path().string());
  ASSERT_TRUE(old_graph) << old_graph.error().to_string();
  const Tensor& old_w = old_graph->initializers.at("W");
  const Tensor before = old_w.clone();

  ASSERT_TRUE(export_model_file(matmul_add_graph(2.0f), path, options));
  EXPECT_EQ(std::memcmp(old_w.data(), before.data(), before.nbytes()), 0);
  auto new_graph = import_model_file(path, dir.path().string());
  ASSERT_TRUE(new_graph) << new_graph.error().to_string();
  const Tensor& new_w = new_graph->initializers.at("W");
  for (int64_t i = 0; i < new_w.numel(); ++i)
    ASSERT_EQ(new_w.data_as<float>()[i], 2.0f * before.data_as<float>()[i]) << "element " << i;
}

TEST(ExportModelFile, UnwritableFolderIsAnError) {
  auto files = export_model_file(matmul_add_graph(1.0f), "/nonexistent_ignis_folder/m.onnx");
  ASSERT_FALSE(files);
  EXPECT_NE(files.error().message().find("/nonexistent_ignis_folder/m.onnx"), std::string::npos)
      << files.error().message();
}

}  // namespace
}  // namespace ignis::onnx_io
