// SPDX-License-Identifier: Apache-2.0
// External-data initializers: mapped in place where aligned, copied where not, identical results
// to the same model in one file, clear errors for bad ranges and locations, and mapped pages
// released with the weights that prepacking kernels no longer need.
#include "onnx/external_data.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/aligned_alloc.h"
#include "ignis/session.h"
#include "kernels/registry.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "testing/temp_dir.h"

namespace ignis::onnx_io {
namespace {

namespace fs = std::filesystem;

using testing::TempDir;

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_f32_initializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
}

// y = Relu(BatchNormalization(Conv(x, W, B))) -> Flatten -> MatMul(M) + A: weights for the
// folding passes (Conv+BN builds new weights), a prepacking kernel (MatMul) and a plain reader.
onnx::ModelProto conv_bn_matmul_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  add_value_info(g->add_input(), "x", {1, 3, 6, 6});
  add_value_info(g->add_output(), "y", {1, 10});
  add_f32_initializer(g, "W", {4, 3, 3, 3}, 1);
  add_f32_initializer(g, "B", {4}, 2);
  add_f32_initializer(g, "scale", {4}, 3);
  add_f32_initializer(g, "bias", {4}, 4);
  add_f32_initializer(g, "mean", {4}, 5);
  add_f32_initializer(g, "var", {4}, 6);
  // Variances must be positive.
  auto* var = g->mutable_initializer(g->initializer_size() - 1);
  auto* vp = reinterpret_cast<float*>(var->mutable_raw_data()->data());
  for (int i = 0; i < 4; ++i) vp[i] = std::fabs(vp[i]) + 0.5f;
  add_f32_initializer(g, "M", {64, 10}, 7);
  add_f32_initializer(g, "A", {10}, 8);
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  };
  node("Conv", {"x", "W", "B"}, "c");
  node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, "bn");
  node("Relu", {"bn"}, "r");
  node("Flatten", {"r"}, "f");
  node("MatMul", {"f", "M"}, "mm");
  node("Add", {"mm", "A"}, "y");
  return m;
}

// Moves every initializer's raw_data of `m` into `dir/data_name`: each tensor starts at
// `align`-aligned offset plus `shift`, as ONNX's own writer would lay them out.
void move_to_external(onnx::ModelProto& m, const fs::path& dir, const std::string& data_name, size_t align,
                      size_t shift) {
  std::ofstream f(dir / data_name, std::ios::binary);
  size_t offset = 0;
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    const size_t start = (offset + align - 1) / align * align + shift;
    f.write(std::string(start - offset, '\0').data(), static_cast<std::streamsize>(start - offset));
    f.write(t.raw_data().data(), static_cast<std::streamsize>(t.raw_data().size()));
    offset = start + t.raw_data().size();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add_kv = [&](const char* k, const std::string& v) {
      auto* kv = t.add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    };
    add_kv("location", data_name);
    add_kv("offset", std::to_string(start));
    add_kv("length", std::to_string(t.raw_data().size()));
    t.clear_raw_data();
  }
}

std::string write_model(const onnx::ModelProto& m, const fs::path& path) {
  std::ofstream f(path, std::ios::binary);
  f << m.SerializeAsString();
  return path.string();
}

// Address ranges of the process's mappings of `file`, from /proc/self/maps.
std::vector<std::pair<uintptr_t, uintptr_t>> mappings_of(const fs::path& file) {
  std::vector<std::pair<uintptr_t, uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string name = fs::absolute(file).lexically_normal().string();
  while (std::getline(maps, line)) {
    if (line.size() < name.size() || line.compare(line.size() - name.size(), name.size(), name) != 0) continue;
    std::istringstream in(line);
    std::string range;
    in >> range;
    const auto dash = range.find('-');
    out.emplace_back(std::stoull(range.substr(0, dash), nullptr, 16), std::stoull(range.substr(dash + 1), nullptr, 16));
  }
  return out;
}

// Resident kilobytes of the process's mappings of `file`, from /proc/self/smaps.
int64_t resident_kb(const fs::path& file) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  const std::string name = fs::absolute(file).lexically_normal().string();
  bool in_file = false;
  int64_t kb = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(':') > line.find(' ')) {
      in_file = line.size() >= name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0;
    } else if (in_file && line.rfind("Rss:", 0) == 0) {
      kb += std::stoll(line.substr(4));
    }
  }
  return kb;
}

bool inside(const Tensor& t, const std::vector<std::pair<uintptr_t, uintptr_t>>& ranges) {
  const auto p = reinterpret_cast<uintptr_t>(t.data());
  for (const auto& [lo, hi] : ranges)
    if (p >= lo && p + t.nbytes() <= hi) return true;
  return false;
}

std::vector<float> run_model(const std::string& path, OptLevel level) {
  SessionOptions so;
  so.threads = 1;
  so.optimization = level;
  auto s = Session::open(path, so);
  EXPECT_TRUE(s) << s.error().to_string();
  if (!s) return {};
  Tensor x = Tensor::empty(DType::F32, {1, 3, 6, 6});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.05f * static_cast<float>(i % 37) - 0.8f;
  auto out = s->run({{"x", x}});
  EXPECT_TRUE(out) << out.error().to_string();
  if (!out) return {};
  const Tensor& y = (*out)[0];
  return std::vector<float>(y.data_as<float>(), y.data_as<float>() + y.numel());
}

TEST(ExternalData, AlignedTensorsAreMappedInPlace) {
  TempDir dir("ignis_ext_aligned");
  auto m = conv_bn_matmul_model();
  move_to_external(m, dir.path(), "weights.bin", 64, 0);
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto g = import_model_file(path, dir.path().string());
  ASSERT_TRUE(g) << g.error().to_string();
  const auto maps = mappings_of(dir.path() / "weights.bin");
  ASSERT_FALSE(maps.empty()) << "weights.bin is not mapped";
  for (const auto& [name, t] : g->initializers) EXPECT_TRUE(inside(t, maps)) << name << " was copied";
  // The bytes are the file's.
  auto inline_model = conv_bn_matmul_model();
  const std::string& raw = inline_model.graph().initializer(6).raw_data();  // M
  ASSERT_EQ(raw.size(), g->initializers.at("M").nbytes());
  EXPECT_EQ(std::memcmp(raw.data(), g->initializers.at("M").data(), raw.size()), 0);
}

TEST(ExternalData, UnalignedTensorsAreCopiedIntoAlignedBuffers) {
  TempDir dir("ignis_ext_unaligned");
  auto m = conv_bn_matmul_model();
  move_to_external(m, dir.path(), "weights.bin", 64, 2);  // float32 at offsets 2 mod 4
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto g = import_model_file(path, dir.path().string());
  ASSERT_TRUE(g) << g.error().to_string();
  // Nothing read in place, so the file is no longer mapped once the import is done.
  EXPECT_TRUE(mappings_of(dir.path() / "weights.bin").empty());
  for (const auto& [name, t] : g->initializers)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kAlignment, 0u) << name;
  auto inline_model = conv_bn_matmul_model();
  const std::string& raw = inline_model.graph().initializer(0).raw_data();  // W
  EXPECT_EQ(std::memcmp(raw.data(), g->initializers.at("W").data(), raw.size()), 0);
}

// External data gives the same bits as the same model in one file, aligned or not, through
// every optimization level: the passes (Conv+BN folding builds new weights) and the prepacking
// kernels read the mapped weights, and a write into them would fault on the read-only mapping.
TEST(ExternalData, ResultsMatchTheSingleFileModel) {
  TempDir dir("ignis_ext_results");
  const std::string single = write_model(conv_bn_matmul_model(), dir.path() / "single.onnx");
  auto aligned = conv_bn_matmul_model();
  move_to_external(aligned, dir.path(), "aligned.bin", 64, 0);
  const std::string aligned_path = write_model(aligned, dir.path() / "aligned.onnx");
  auto unaligned = conv_bn_matmul_model();
  move_to_external(unaligned, dir.path(), "unaligned.bin", 16, 1);
  const std::string unaligned_path = write_model(unaligned, dir.path() / "unaligned.onnx");
  for (OptLevel level : {OptLevel::None, OptLevel::Basic, OptLevel::Extended, OptLevel::All}) {
    const std::vector<float> want = run_model(single, level);
    ASSERT_EQ(want.size(), 10u);
    for (const std::string& path : {aligned_path, unaligned_path}) {
      const std::vector<float> got = run_model(path, level);
      ASSERT_EQ(got.size(), want.size()) << path;
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << path << " at level " << static_cast<int>(level);
    }
  }
}

TEST(ExternalData, TruncatedFileIsAClearError) {
  TempDir dir("ignis_ext_truncated");
  auto m = conv_bn_matmul_model();
  move_to_external(m, dir.path(), "weights.bin", 64, 0);
  const std::string path = write_model(m, dir.path() / "model.onnx");
  const auto size = fs::file_size(dir.path() / "weights.bin");
  fs::resize_file(dir.path() / "weights.bin", size - 8);  // the last tensor (A) loses 2 values
  auto s = Session::open(path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::InvalidModel);
  const std::string& msg = s.error().message();
  EXPECT_NE(msg.find("tensor 'A'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exceeds file 'weights.bin'"), std::string::npos) << msg;

  fs::remove(dir.path() / "weights.bin");
  s = Session::open(path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::NotFound);
  EXPECT_NE(s.error().message().find("weights.bin"), std::string::npos) << s.error().message();
}

TEST(ExternalData, LengthThatDisagreesWithTheShapeIsRefused) {
  TempDir dir("ignis_ext_length");
  auto m = conv_bn_matmul_model();
  move_to_external(m, dir.path(), "weights.bin", 64, 0);
  auto* b = m.mutable_graph()->mutable_initializer(1);  // B: 4 floats
  b->mutable_external_data(2)->set_value("12");
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto g = import_model_file(path, dir.path().string());
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("tensor 'B': external data in 'weights.bin' has 12 bytes, expected 16"),
            std::string::npos)
      << g.error().message();
  b->mutable_external_data(2)->set_value("16");
  b->mutable_external_data(1)->set_value("-4");
  write_model(m, dir.path() / "model.onnx");
  g = import_model_file(path, dir.path().string());
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("offset -4"), std::string::npos) << g.error().message();
}

TEST(ExternalData, LocationsOutsideTheModelFolderAreRefused) {
  TempDir dir("ignis_ext_escape");
  fs::create_directories(dir.path() / "sub");
  auto m = conv_bn_matmul_model();
  move_to_external(m, dir.path(), "weights.bin", 64, 0);
  for (const char* location : {"../weights.bin", "sub/../../weights.bin", "/etc/passwd"}) {
    m.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value(location);
    const std::string path = write_model(m, dir.path() / "sub" / "model.onnx");
    auto g = import_model_file(path, (dir.path() / "sub").string());
    ASSERT_FALSE(g) << location;
    EXPECT_NE(g.error().message().find(std::string("tensor 'W': external data location '") + location +
                                       "' leaves the model folder"),
              std::string::npos)
        << g.error().message();
  }
  // A model read from bytes has no folder to resolve external data against.
  m.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value("weights.bin");
  const std::string bytes = m.SerializeAsString();
  auto g = import_model(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), "");
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message().find("needs the model's folder"), std::string::npos) << g.error().message();
}

TEST(ExternalData, PackedAndBoolTensorsAreCopied) {
  TempDir dir("ignis_ext_types");
  {
    std::ofstream f(dir.path() / "data.bin", std::ios::binary);
    f.write("\xF1\x07", 2);          // int4 1, -1, 7 at offset 0
    f.write("\x00\x02\x01\x00", 4);  // bool at offset 2: 0, 2 (normalized to 1), 1, 0
  }
  onnx::TensorProto tp;
  tp.set_data_type(22);
  tp.add_dims(3);
  tp.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = tp.add_external_data();
  kv->set_key("location");
  kv->set_value("data.bin");
  kv = tp.add_external_data();
  kv->set_key("length");
  kv->set_value("2");
  ExternalData external(dir.path().string());
  const ExternalLocation int4_at{"data.bin", 0, 2};
  auto bytes = external.bytes(int4_at, 2, "tensor 'q'");
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  EXPECT_EQ(std::memcmp(bytes->data, "\xF1\x07", 2), 0);

  auto b = external.tensor({"data.bin", 2, 4}, DType::Bool, {4}, "tensor 'b'");
  ASSERT_TRUE(b) << b.error().to_string();
  const std::vector<uint8_t> got(b->data_as<uint8_t>(), b->data_as<uint8_t>() + 4);
  EXPECT_EQ(got, (std::vector<uint8_t>{0, 1, 1, 0}));

  // Through the importer: the int4 tensor unpacks to one byte per element.
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(21);
  auto* init = m.mutable_graph()->add_initializer();
  *init = tp;
  init->set_name("q");
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto g = import_model_file(path, dir.path().string());
  ASSERT_TRUE(g) << g.error().to_string();
  const Tensor& q = g->initializers.at("q");
  EXPECT_EQ(q.dtype(), DType::I4);
  EXPECT_EQ(q.data_as<int8_t>()[0], 1);
  EXPECT_EQ(q.data_as<int8_t>()[1], -1);
  EXPECT_EQ(q.data_as<int8_t>()[2], 7);
}

// Dropping a tensor drops its mapped pages; dropping the last one unmaps the file.
TEST(ExternalData, DroppingTensorsReleasesTheirPagesAndTheLastUnmaps) {
  TempDir dir("ignis_ext_release");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  // 64000 bytes each: "second" starts inside the last page of "first".
  add_f32_initializer(m.mutable_graph(), "first", {64, 250}, 1);
  add_f32_initializer(m.mutable_graph(), "second", {64, 250}, 2);
  const std::string second_bytes = m.graph().initializer(1).raw_data();
  move_to_external(m, dir.path(), "weights.bin", 64, 0);
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto g = import_model_file(path, dir.path().string());
  ASSERT_TRUE(g) << g.error().to_string();
  const fs::path data = dir.path() / "weights.bin";
  ASSERT_FALSE(mappings_of(data).empty());
  float sum = 0;
  for (const auto& [name, t] : g->initializers)
    for (int64_t i = 0; i < t.numel(); ++i) sum += t.data_as<float>()[i];
  EXPECT_TRUE(std::isfinite(sum));
  const int64_t both = resident_kb(data);
  EXPECT_GE(both, 124);  // every page read

  Tensor copy = g->initializers.at("first");  // a second handle keeps the range
  g->initializers.erase("first");
  EXPECT_EQ(resident_kb(data), both);
  copy = Tensor();
  EXPECT_LE(resident_kb(data), both - 60);
  EXPECT_FALSE(mappings_of(data).empty());  // "second" still reads it
  // The page it shared with "first" was dropped too; reading it again gives the file's bytes.
  EXPECT_EQ(std::memcmp(g->initializers.at("second").data(), second_bytes.data(), second_bytes.size()), 0);
  g->initializers.clear();
  EXPECT_TRUE(mappings_of(data).empty());
}

// A session whose weight only a prepacking kernel reads releases it after planning, and with it
// the mapping of its file.
TEST(ExternalData, SessionReleasesPrepackedWeightsFromTheMapping) {
  if (!kernels::isa_enabled(kernels::Isa::Avx2)) GTEST_SKIP() << "no prepacking MatMul kernel in this process";
  TempDir dir("ignis_ext_session");
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  add_value_info(g->add_input(), "x", {2, 256});
  add_value_info(g->add_output(), "y", {2, 128});
  add_f32_initializer(g, "M", {256, 128}, 3);
  auto* n = g->add_node();
  n->set_op_type("MatMul");
  n->add_input("x");
  n->add_input("M");
  n->add_output("y");
  const std::string single = write_model(m, dir.path() / "single.onnx");
  move_to_external(m, dir.path(), "weights.bin", 4096, 0);
  const std::string path = write_model(m, dir.path() / "model.onnx");
  auto s = Session::open(path);
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_TRUE(mappings_of(dir.path() / "weights.bin").empty()) << "the released weight is still mapped";
  auto want = Session::open(single);
  ASSERT_TRUE(want) << want.error().to_string();
  Tensor x = Tensor::empty(DType::F32, {2, 256});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.01f * static_cast<float>(i % 101) - 0.5f;
  auto got = s->run({{"x", x}});
  auto ref = want->run({{"x", x}});
  ASSERT_TRUE(got && ref);
  EXPECT_EQ(std::memcmp((*got)[0].data(), (*ref)[0].data(), (*ref)[0].nbytes()), 0);
}

}  // namespace
}  // namespace ignis::onnx_io
