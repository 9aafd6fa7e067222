// SPDX-License-Identifier: Apache-2.0
// Session behaviour through the public API: planning, dynamic shapes, thread safety, and the
// errors users get for bad models and bad inputs.
#include "ignis/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <onnx/onnx_pb.h>

#include "testing/model_builder.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

Tensor f32(const Shape& shape, std::vector<float> v) {
  Tensor t = Tensor::empty(DType::F32, shape);
  std::memcpy(t.data(), v.data(), v.size() * 4);
  return t;
}

Result<Session> open(const ModelBuilder& b, const SessionOptions& options = {}) {
  const std::string bytes = b.bytes();
  return Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
}

// y = relu(x + bias)
ModelBuilder add_relu_model() {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, 3}, {"batch"})
      .initializer_f32("bias", {3}, {1.0f, -2.0f, 0.5f})
      .node("Add", {"x", "bias"}, {"s"}, "add")
      .node("Relu", {"s"}, {"y"}, "relu")
      .output("y", DType::F32);
  return b;
}

TEST(Session, RunsAndHandlesADynamicBatch) {
  auto s = open(add_relu_model());
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_EQ(s->inputs()[0].shape_string(), "[batch, 3]");
  for (int64_t batch : {1, 2, 5}) {
    std::vector<float> x(batch * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 4.0f;
    auto out = s->run({{"x", f32({batch, 3}, x)}});
    ASSERT_TRUE(out) << out.error().to_string();
    ASSERT_EQ((*out)[0].shape(), (Shape{batch, 3}));
    const float bias[3] = {1.0f, -2.0f, 0.5f};
    for (int64_t i = 0; i < batch * 3; ++i)
      EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[i], std::max(0.0f, x[i] + bias[i % 3]));
  }
}

TEST(Session, ShapeArithmeticIsFoldedAtPlanTime) {
  // y = Reshape(x, Concat(Shape(x)[0:1], [-1])): a pattern torch exports emit everywhere.
  ModelBuilder b;
  b.input("x", DType::F32, {-1, 2, 3}, {"batch"})
      .initializer_i64("minus1", {1}, {-1})
      .initializer_i64("zero", {1}, {0})
      .node("Shape", {"x"}, {"shape"})
      .node("Gather", {"shape", "zero"}, {"batch"})
      .node("Concat", {"batch", "minus1"}, {"target"}, "concat", {{"axis", 0}})
      .node("Reshape", {"x", "target"}, {"y"}, "reshape")
      .output("y", DType::F32);
  auto s = open(b);
  ASSERT_TRUE(s) << s.error().to_string();
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto out = s->run({{"x", f32({2, 2, 3}, x)}});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6}));
  EXPECT_EQ(std::memcmp((*out)[0].data(), x.data(), 48), 0);
  // Only Reshape is left to run: Shape/Gather/Concat became constants of the plan.
  std::vector<OpTiming> timings;
  ASSERT_TRUE(s->run_profiled({{"x", f32({2, 2, 3}, x)}}, &timings));
  ASSERT_EQ(timings.size(), 1u);
  EXPECT_EQ(timings[0].op_type, "Reshape");
}

TEST(Session, DataDependentShapesFallBackToDynamicRuns) {
  // The Reshape target is a graph input: its value is only known at run time.
  ModelBuilder b;
  b.input("x", DType::F32, {6}).input("shape", DType::I64, {2})
      .node("Reshape", {"x", "shape"}, {"y"}, "reshape")
      .output("y", DType::F32);
  auto s = open(b);
  ASSERT_TRUE(s) << s.error().to_string();
  Tensor shape = Tensor::empty(DType::I64, {2});
  shape.data_as<int64_t>()[0] = 3;
  shape.data_as<int64_t>()[1] = 2;
  auto out = s->run({{"x", f32({6}, {1, 2, 3, 4, 5, 6})}, {"shape", shape}});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  shape.data_as<int64_t>()[0] = 4;  // 4x2 != 6 elements
  auto bad = s->run({{"x", f32({6}, {1, 2, 3, 4, 5, 6})}, {"shape", shape}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("reshape"), std::string::npos) << bad.error().message();
}

TEST(Session, ConcurrentRunsGiveTheSameAnswers) {
  auto s = open(add_relu_model());
  ASSERT_TRUE(s);
  std::atomic<int> mismatches{0};
  auto worker = [&](int id) {
    for (int r = 0; r < 200; ++r) {
      const float v = static_cast<float>(id * 1000 + r);
      auto out = s->run({{"x", f32({1, 3}, {v, v, v})}});
      if (!out) ADD_FAILURE() << out.error().to_string();
      else if ((*out)[0].data_as<float>()[0] != v + 1.0f || (*out)[0].data_as<float>()[1] != std::max(0.0f, v - 2.0f)) mismatches++;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Plans are dropped (least recently used) beyond max_cached_plans while other threads run
// with them: answers stay right and the count stays bounded.
class PlanCacheSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(PlanCacheSizes, NewShapesWhileOtherThreadsRun) {
  SessionOptions options;
  options.max_cached_plans = GetParam();
  auto s = open(add_relu_model(), options);
  ASSERT_TRUE(s);
  std::atomic<int> mismatches{0};
  auto worker = [&](int id) {
    for (int r = 0; r < 100; ++r) {
      const int64_t batch = 1 + (id + r) % 7;  // new signatures appear while others run
      std::vector<float> x(batch * 3, static_cast<float>(id + r));
      auto out = s->run({{"x", f32({batch, 3}, x)}});
      if (!out) ADD_FAILURE() << out.error().to_string();
      else if ((*out)[0].shape() != Shape{batch, 3} || (*out)[0].data_as<float>()[batch * 3 - 3] != x[0] + 1.0f)
        mismatches++;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  if (GetParam() > 0) EXPECT_LE(s->cached_plans(), GetParam());
  else EXPECT_EQ(s->cached_plans(), 7u);  // every batch size 1..7 kept
}

INSTANTIATE_TEST_SUITE_P(Session, PlanCacheSizes, ::testing::Values(size_t{0}, size_t{1}, size_t{2}, size_t{64}));

TEST(Session, AnOutputRequestedTwiceComesBackTwice) {
  auto s = open(add_relu_model());
  ASSERT_TRUE(s);
  auto out = s->run({{"x", f32({1, 3}, {1, 2, 3})}}, {"y", "y"});
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ(out->size(), 2u);
  for (const Tensor& t : *out) EXPECT_FLOAT_EQ(t.data_as<float>()[0], 2.0f);
}

// Weights stored as raw_data (as exporters write them), read from a file.
TEST(Session, OpensAFileWithRawDataWeights) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(5);
  g->add_output()->set_name("y");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(5);
  const float wv[5] = {0.5f, -1.0f, 2.0f, 0.0f, 3.25f};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(wv), sizeof(wv)));
  auto* n = g->add_node();
  n->set_op_type("Mul");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  const auto path = std::filesystem::temp_directory_path() / "ignis_session_raw_data.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
  }
  auto s = Session::open(path.string());
  ASSERT_TRUE(s) << s.error().to_string();
  auto out = s->run({{"x", f32({5}, {1, 2, 3, 4, 5})}});
  ASSERT_TRUE(out) << out.error().to_string();
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ((*out)[0].data_as<float>()[i], wv[i] * static_cast<float>(i + 1));

  // The same file cut short: an invalid-model error naming the file.
  const std::string bytes = m.SerializeAsString();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << bytes.substr(0, bytes.size() - 7);
  }
  auto cut = Session::open(path.string());
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), StatusCode::InvalidModel) << cut.error().to_string();
  EXPECT_NE(cut.error().message().find(path.string()), std::string::npos) << cut.error().message();
  std::filesystem::remove(path);
}

// --- bad models -------------------------------------------------------------------------

TEST(SessionErrors, MissingFile) {
  auto s = Session::open("/nonexistent/model.onnx");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::NotFound);
  EXPECT_NE(s.error().message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(SessionErrors, NotAnOnnxFile) {
  const std::string text = "this is not a model, just some text\n";
  auto s = Session::open_bytes(std::as_bytes(std::span<const char>(text.data(), text.size())));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::InvalidModel) << s.error().to_string();
}

TEST(SessionErrors, TruncatedFile) {
  const std::string bytes = add_relu_model().bytes();
  for (size_t cut : {bytes.size() / 3, bytes.size() / 2, bytes.size() - 3}) {
    const std::string part = bytes.substr(0, cut);
    auto s = Session::open_bytes(std::as_bytes(std::span<const char>(part.data(), part.size())));
    EXPECT_FALSE(s) << "cut at " << cut;
  }
}

TEST(SessionErrors, CycleIsNamed) {
  ModelBuilder b;
  b.input("x", DType::F32, {3})
      .node("Add", {"x", "b"}, {"a"}, "first")
      .node("Relu", {"a"}, {"b"}, "second")
      .output("b", DType::F32);
  auto s = open(b);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("cycle"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("'first'"), std::string::npos) << s.error().message();
}

TEST(SessionErrors, MissingInitializerIsNamed) {
  ModelBuilder b;
  b.input("x", DType::F32, {3}).node("Add", {"x", "weights"}, {"y"}, "add").output("y", DType::F32);
  auto s = open(b);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::InvalidModel);
  EXPECT_NE(s.error().message().find("'weights'"), std::string::npos) << s.error().message();
}

TEST(SessionErrors, EveryUnsupportedOpIsListed) {
  ModelBuilder b;
  b.opset_import("com.example", 1)
      .input("x", DType::F32, {3})
      .node("FancyOp", {"x"}, {"a"}, "fancy1", {}, "com.example")
      .node("Relu", {"a"}, {"b"}, "relu")
      .node("OtherOp", {"b"}, {"c"}, "other", {}, "com.example")
      .node("FancyOp", {"c"}, {"y"}, "fancy2", {}, "com.example")
      .output("y", DType::F32);
  auto s = open(b);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::Unsupported);
  const std::string& m = s.error().message();
  for (const char* part : {"FancyOp", "OtherOp", "'fancy1'", "'fancy2'", "'other'"})
    EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
}

// --- bad inputs at run time ------------------------------------------------------------

TEST(SessionErrors, WrongInputNameShapeAndDtype) {
  auto s = open(add_relu_model());
  ASSERT_TRUE(s);
  auto wrong_name = s->run({{"nope", f32({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_name);
  EXPECT_NE(wrong_name.error().message().find("'nope'"), std::string::npos);
  EXPECT_NE(wrong_name.error().message().find("'x'"), std::string::npos);

  auto wrong_shape = s->run({{"x", f32({1, 4}, {1, 2, 3, 4})}});
  ASSERT_FALSE(wrong_shape);
  EXPECT_EQ(wrong_shape.error().code(), StatusCode::InvalidArgument);
  EXPECT_NE(wrong_shape.error().message().find("[batch, 3]"), std::string::npos) << wrong_shape.error().message();

  Tensor ints = Tensor::zeros(DType::I64, {1, 3});
  auto wrong_dtype = s->run({{"x", ints}});
  ASSERT_FALSE(wrong_dtype);
  EXPECT_NE(wrong_dtype.error().message().find("float32"), std::string::npos) << wrong_dtype.error().message();

  auto missing = s->run({});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("missing inputs: 'x'"), std::string::npos) << missing.error().message();

  // The session keeps working after errors.
  EXPECT_TRUE(s->run({{"x", f32({1, 3}, {1, 2, 3})}}));
}

TEST(SessionErrors, IncompatibleShapesInsideTheGraph) {
  ModelBuilder b;
  b.input("x", DType::F32, {-1}).input("z", DType::F32, {-1})
      .node("Add", {"x", "z"}, {"y"}, "adder")
      .output("y", DType::F32);
  auto s = open(b);
  ASSERT_TRUE(s) << s.error().to_string();
  auto r = s->run({{"x", f32({2}, {1, 2})}, {"z", f32({3}, {1, 2, 3})}});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("'adder'"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace ignis
