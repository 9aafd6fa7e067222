// SPDX-License-Identifier: Apache-2.0
// SessionOptions::memory_limit_bytes: runs whose shapes need more memory than allowed, or whose
// sizes do not fit in 64 bits, return an error before allocating and leave the session usable.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

constexpr size_t kLimit = 64 * 1024;
constexpr int64_t kWidth = 256;  // one row of x is 1 kB

// Unoptimized, so that the values counted are the ones the model spells out.
Result<Session> open(const ModelBuilder& b, size_t memory_limit_bytes) {
  SessionOptions options;
  options.memory_limit_bytes = memory_limit_bytes;
  return testing::open_unoptimized(b, options);
}

Tensor ramp(int64_t rows) {
  Tensor t = Tensor::empty(DType::F32, {rows, kWidth});
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  return t;
}

Tensor i64(std::vector<int64_t> v) {
  Tensor t = Tensor::empty(DType::I64, {static_cast<int64_t>(v.size())});
  std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

bool contains(const Status& s, const std::string& text) { return s.message().find(text) != std::string::npos; }

// y = relu(relu(x)): one arena intermediate and one output, each the size of x.
ModelBuilder relu_model() {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, kWidth}, {"batch"})
      .node("Relu", {"x"}, {"r"}, "relu_1")
      .node("Relu", {"r"}, {"y"}, "relu_2")
      .output("y", DType::F32);
  return b;
}

TEST(SessionMemoryLimit, DefaultsToThePhysicalMemory) {
  auto s = open(relu_model(), 0);
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_GT(s->memory_limit_bytes(), size_t{1} << 20);
  auto limited = open(relu_model(), kLimit);
  ASSERT_TRUE(limited) << limited.error().to_string();
  EXPECT_EQ(limited->memory_limit_bytes(), kLimit);
}

TEST(SessionMemoryLimit, ARunOverTheLimitFailsAndTheSessionKeepsServing) {
  auto s = open(relu_model(), kLimit);
  ASSERT_TRUE(s) << s.error().to_string();
  auto unlimited = open(relu_model(), 0);
  ASSERT_TRUE(unlimited) << unlimited.error().to_string();

  auto big = s->run({{"x", ramp(100)}});  // 100 kB per value
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(big.error(), "input shapes {x: [100, 256]} need at least 102 kB")) << big.error().message();
  EXPECT_TRUE(contains(big.error(), "memory limit of 65.5 kB (SessionOptions::memory_limit_bytes)"))
      << big.error().message();

  for (int64_t rows : {8, 1, 20}) {
    auto out = s->run({{"x", ramp(rows)}});
    ASSERT_TRUE(out) << out.error().to_string();
    auto expected = unlimited->run({{"x", ramp(rows)}});
    ASSERT_TRUE(expected) << expected.error().to_string();
    ASSERT_EQ((*out)[0].shape(), (*expected)[0].shape());
    EXPECT_EQ(std::memcmp((*out)[0].data(), (*expected)[0].data(), (*out)[0].nbytes()), 0);
  }
  // A failed signature is not remembered as planned: it fails again the same way.
  auto again = s->run({{"x", ramp(100)}});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(unlimited->run({{"x", ramp(100)}}));
}

TEST(SessionMemoryLimit, ArenaAndOutputsCountTogether) {
  auto s = open(relu_model(), kLimit);
  ASSERT_TRUE(s) << s.error().to_string();
  // 40 rows: every value (40 kB) fits alone; an intermediate plus the output do not.
  auto r = s->run({{"x", ramp(40)}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(r.error(), "need 81.9 kB of activations and outputs")) << r.error().message();
  auto arena = s->arena_bytes({{"x", Tensor::view(DType::F32, Shape{40, kWidth}, static_cast<const void*>(nullptr))}});
  ASSERT_FALSE(arena);
  EXPECT_EQ(arena.error().code(), StatusCode::ResourceExhausted);
}

TEST(SessionMemoryLimit, ConstantsFoldedForTheShapesCount) {
  // c = ConstantOfShape(Shape(x)) is computed when the plan is made; y = x + c is the output.
  ModelBuilder b;
  b.input("x", DType::F32, {-1, kWidth}, {"batch"})
      .node("Shape", {"x"}, {"shape"}, "shape")
      .node("ConstantOfShape", {"shape"}, {"c"}, "zeros")
      .node("Add", {"x", "c"}, {"y"}, "add")
      .output("y", DType::F32);
  auto s = open(b, kLimit);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_TRUE(s->run({{"x", ramp(20)}}));
  auto r = s->run({{"x", ramp(40)}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(r.error(), "need 81.9 kB")) << r.error().message();
}

TEST(SessionMemoryLimit, AbsurdDimsAreAnErrorNotACrash) {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, -1}, {"rows", "cols"})
      .node("Relu", {"x"}, {"y"}, "relu")
      .output("y", DType::F32);
  auto s = open(b, 0);
  ASSERT_TRUE(s) << s.error().to_string();
  // Planning reads only shapes; no kernel runs, so the stand-in data is never read.
  float one = 1.0f;
  auto overflow = s->run({{"x", Tensor::view(DType::F32, Shape{1000000000000, 1000000000000}, &one)}});
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().code(), StatusCode::InvalidArgument);
  EXPECT_TRUE(contains(overflow.error(), "input 'x' has shape [1000000000000, 1000000000000]"))
      << overflow.error().message();
  auto huge = s->run({{"x", Tensor::view(DType::F32, Shape{1000000000000, 1000000}, &one)}});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(huge.error(), "'y' float32[1000000000000, 1000000]")) << huge.error().message();
  auto fine = s->run({{"x", ramp(2)}});
  ASSERT_TRUE(fine) << fine.error().to_string();
}

// y = Expand(x, shape), z = relu(y): the shape is data, so the plan is dynamic.
ModelBuilder expand_model() {
  ModelBuilder b;
  b.input("x", DType::F32, {1}).input("shape", DType::I64, {2})
      .node("Expand", {"x", "shape"}, {"y"}, "expand")
      .node("Relu", {"y"}, {"z"}, "relu")
      .output("z", DType::F32);
  return b;
}

TEST(SessionMemoryLimit, DynamicRunsCheckEachAllocation) {
  auto s = open(expand_model(), kLimit);
  ASSERT_TRUE(s) << s.error().to_string();
  Tensor x = Tensor::empty(DType::F32, {1});
  x.data_as<float>()[0] = 2.5f;
  auto arena = s->arena_bytes({{"x", x}, {"shape", i64({4, 8})}});
  ASSERT_TRUE(arena) << arena.error().to_string();
  EXPECT_EQ(*arena, 0u);  // dynamic

  auto small = s->run({{"x", x}, {"shape", i64({4, 8})}});
  ASSERT_TRUE(small) << small.error().to_string();
  ASSERT_EQ((*small)[0].shape(), (Shape{4, 8}));
  EXPECT_EQ((*small)[0].data_as<float>()[31], 2.5f);

  // One allocation over the limit.
  auto big = s->run({{"x", x}, {"shape", i64({100, 1000})}});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(big.error(), "node 'expand'")) << big.error().message();
  EXPECT_TRUE(contains(big.error(), "'y' float32[100, 1000]")) << big.error().message();

  // Each allocation fits, but Relu's output and its live input together do not.
  auto both = s->run({{"x", x}, {"shape", i64({10, 1024})}});
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().code(), StatusCode::ResourceExhausted);
  EXPECT_TRUE(contains(both.error(), "node 'relu'")) << both.error().message();
  EXPECT_TRUE(contains(both.error(), "with 41.0 kB already held by this run")) << both.error().message();

  auto unlimited = open(expand_model(), 0);
  ASSERT_TRUE(unlimited) << unlimited.error().to_string();
  auto overflow = unlimited->run({{"x", x}, {"shape", i64({1000000000000, 1000000000000})}});
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().code(), StatusCode::InvalidArgument);
  EXPECT_TRUE(contains(overflow.error(), "[1000000000000, 1000000000000]")) << overflow.error().message();

  auto after = s->run({{"x", x}, {"shape", i64({4, 8})}});
  ASSERT_TRUE(after) << after.error().to_string();
}

TEST(StatusCode, ResourceExhaustedHasAName) {
  const Status s = resource_exhausted("too big");
  EXPECT_EQ(s.code(), StatusCode::ResourceExhausted);
  EXPECT_EQ(s.to_string(), "resource exhausted: too big");
}

}  // namespace
}  // namespace ignis
