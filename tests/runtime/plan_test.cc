// SPDX-License-Identifier: Apache-2.0
// Plans sharing kernels through a KernelCache, and weights released once only kernels that
// keep their own copy read them: later signatures, dynamic plans and concurrent runs must
// still compute what a session with every weight present computes. Dynamic plans keep what
// they may across runs (kernels, shapes that follow from types) and nothing that depends on
// a run's values.
#include "runtime/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "ignis/session.h"
#include "runtime/model.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis::runtime {
namespace {

using testing::ModelBuilder;

constexpr int64_t kK = 4, kN = 3;

std::vector<float> weights() {
  std::vector<float> w(kK * kN);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25f * static_cast<float>(i) - 1.0f;
  return w;
}

// y = relu(MatMul(x, W)); with `extra_reader`, also z = W + W (a reader that needs W's data).
ModelBuilder matmul_model(bool extra_reader) {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, kK}, {"batch"})
      .initializer_f32("W", {kK, kN}, weights())
      .node("MatMul", {"x", "W"}, {"m"}, "matmul")
      .node("Relu", {"m"}, {"y"}, "relu")
      .output("y", DType::F32);
  if (extra_reader) b.node("Add", {"W", "W"}, {"z"}, "add").output("z", DType::F32);
  return b;
}

// y = MatMul(x, W)
ModelBuilder matmul_only() {
  ModelBuilder b;
  b.input("x", DType::F32, {-1, kK}, {"batch"})
      .initializer_f32("W", {kK, kN}, weights())
      .node("MatMul", {"x", "W"}, {"y"}, "matmul")
      .output("y", DType::F32);
  return b;
}

// x @ W from a copy taken at creation; never reads input 1's data at run time, and records
// whether it ever saw that input without data (released) but with its shape intact.
class CopyingMatMul final : public kernels::Kernel {
 public:
  explicit CopyingMatMul(const Tensor& w) : w_(w.clone()) {}
  Status run(kernels::KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (w.data() == nullptr && w.shape() == w_.shape()) saw_released_ = true;
    Tensor& y = ctx.output(0);
    const int64_t rows = x.dim(0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t n = 0; n < kN; ++n) {
        float acc = 0;
        for (int64_t k = 0; k < kK; ++k) acc += x.data_as<float>()[r * kK + k] * w_.data_as<float>()[k * kN + n];
        y.data_as<float>()[r * kN + n] = acc;
      }
    return Status::ok();
  }
  bool uses_constant_data(int input) const override { return input != 1; }
  bool saw_released() const { return saw_released_; }

 private:
  Tensor w_;
  mutable std::atomic<bool> saw_released_{false};
};

std::shared_ptr<Model> load(const ModelBuilder& b) { return testing::load_runtime_model(b); }

int node_index(const Model& m, const std::string& op) {
  for (size_t i = 0; i < m.nodes.size(); ++i)
    if (m.nodes[i].node->op_type == op) return static_cast<int>(i);
  return -1;
}

// Seeds `cache` with a CopyingMatMul for the model's MatMul node, as a prepacking kernel
// would be created by the first plan.
std::shared_ptr<const CopyingMatMul> seed_cache(const Model& m, KernelCache& cache) {
  const int ni = node_index(m, "MatMul");
  const DType dtypes[2] = {DType::F32, DType::F32};
  const auto* def = kernels::KernelRegistry::global().find("", "MatMul", m.nodes[ni].opset, dtypes);
  EXPECT_NE(def, nullptr);
  auto k = std::make_shared<const CopyingMatMul>(*m.initializers[m.value_ids.at("W")]);
  cache.insert(ni, dtypes, {def, std::string(def->id), k});
  return k;
}

Tensor random_input(int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Tensor t = Tensor::empty(DType::F32, {batch, kK});
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = normal(rng);
  return t;
}

// The same model through a plain session (registry kernels, weights kept).
Tensor expected(const ModelBuilder& b, const Tensor& x) {
  const std::string bytes = b.bytes();
  auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
  EXPECT_TRUE(s) << s.error().to_string();
  auto out = s->run({{"x", x}}, {"y"});
  EXPECT_TRUE(out) << out.error().to_string();
  return (*out)[0];
}

void expect_same(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i)
    EXPECT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], 1e-5f) << "element " << i;
}

Result<std::vector<Tensor>> run_plan(const Plan& plan, const Model& m, const Tensor& x, int output) {
  const Tensor* ins[1] = {&x};
  const int outs[1] = {m.graph_outputs[output]};
  return plan.run(ins, outs, nullptr, nullptr);
}

TEST(PlanWeightRelease, DropsWeightsOnlyCachedKernelsRead) {
  auto model = load(matmul_model(false));
  KernelCache cache;
  auto kernel = seed_cache(*model, cache);
  std::vector<int> unused;
  PlanOptions po;
  po.kernels = &cache;
  po.on_initializer_unused = [&](int v) {
    unused.push_back(v);
    release_initializer_data(*model, v);
  };
  auto plan = Plan::create(model, {{DType::F32, Shape{1, kK}}}, po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_EQ(unused, (std::vector<int>{model->value_ids.at("W")}));
  const Tensor& w = *model->initializers[unused[0]];
  EXPECT_EQ(w.data(), nullptr);
  EXPECT_EQ(w.shape(), (Shape{kK, kN}));  // metadata stays for shape inference

  const Tensor x = random_input(1, 1);
  auto out = run_plan(**plan, *model, x, 0);
  ASSERT_TRUE(out) << out.error().to_string();
  expect_same((*out)[0], expected(matmul_model(false), x));
  EXPECT_TRUE(kernel->saw_released());
}

TEST(PlanWeightRelease, KeepsWeightsAnotherKernelReads) {
  auto model = load(matmul_model(true));
  KernelCache cache;
  seed_cache(*model, cache);
  PlanOptions po;
  po.kernels = &cache;
  int calls = 0;
  po.on_initializer_unused = [&](int) { ++calls; };
  auto plan = Plan::create(model, {{DType::F32, Shape{2, kK}}}, po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  EXPECT_EQ(calls, 0);
}

TEST(PlanWeightRelease, NewSignaturesReuseCachedKernelsAfterRelease) {
  auto model = load(matmul_model(false));
  KernelCache cache;
  seed_cache(*model, cache);
  PlanOptions first;
  first.kernels = &cache;
  first.on_initializer_unused = [&](int v) { release_initializer_data(*model, v); };
  ASSERT_TRUE(Plan::create(model, {{DType::F32, Shape{1, kK}}}, first));

  PlanOptions later;
  later.kernels = &cache;
  for (int64_t batch : {3, 7}) {
    auto plan = Plan::create(model, {{DType::F32, Shape{batch, kK}}}, later);
    ASSERT_TRUE(plan) << plan.error().to_string();
    const Tensor x = random_input(batch, static_cast<uint32_t>(batch));
    auto out = run_plan(**plan, *model, x, 0);
    ASSERT_TRUE(out) << out.error().to_string();
    expect_same((*out)[0], expected(matmul_model(false), x));
  }

  // Without the cache the weights would be needed again: an error, not a crash.
  KernelCache empty;
  PlanOptions uncached;
  uncached.kernels = &empty;
  auto plan = Plan::create(model, {{DType::F32, Shape{2, kK}}}, uncached);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("released"), std::string::npos) << plan.error().message();
}

TEST(PlanWeightRelease, DynamicPlanRunsThroughCachedKernels) {
  // Reshape to a shape given as an input: output shapes depend on data, so the plan is dynamic
  // and every run creates kernels, except those the cache holds.
  ModelBuilder b;
  b.input("x", DType::F32, {-1, kK}, {"batch"})
      .input("shape", DType::I64, {2})
      .initializer_f32("W", {kK, kN}, weights())
      .node("MatMul", {"x", "W"}, {"m"}, "matmul")
      .node("Reshape", {"m", "shape"}, {"y"}, "reshape")
      .output("y", DType::F32);
  auto model = load(b);
  KernelCache cache;
  seed_cache(*model, cache);
  PlanOptions po;
  po.kernels = &cache;
  po.on_initializer_unused = [&](int v) { release_initializer_data(*model, v); };
  auto plan = Plan::create(model, {{DType::F32, Shape{2, kK}}, {DType::I64, Shape{2}}}, po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_TRUE((*plan)->dynamic());
  EXPECT_EQ(model->initializers[model->value_ids.at("W")]->data(), nullptr);

  const Tensor x = random_input(2, 5);
  Tensor shape = Tensor::empty(DType::I64, {2});
  shape.data_as<int64_t>()[0] = 1;
  shape.data_as<int64_t>()[1] = 2 * kN;
  const Tensor* ins[2] = {&x, &shape};
  const int outs[1] = {model->graph_outputs[0]};
  auto out = (*plan)->run(ins, outs, nullptr, nullptr);
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ((*out)[0].shape(), (Shape{1, 2 * kN}));
  expect_same((*out)[0], expected(matmul_only(), x).reshaped({1, 2 * kN}));
}

TEST(PlanWeightRelease, ConcurrentRunsAfterRelease) {
  auto model = load(matmul_model(false));
  KernelCache cache;
  seed_cache(*model, cache);
  PlanOptions po;
  po.kernels = &cache;
  po.on_initializer_unused = [&](int v) { release_initializer_data(*model, v); };
  auto plan = Plan::create(model, {{DType::F32, Shape{4, kK}}}, po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  const Tensor x = random_input(4, 9);
  auto first = run_plan(**plan, *model, x, 0);
  ASSERT_TRUE(first) << first.error().to_string();
  const Tensor want = (*first)[0];
  expect_same(want, expected(matmul_model(false), x));
  ThreadPool pool(2);
  std::atomic<int> bad{0};
  auto work = [&] {
    for (int r = 0; r < 200; ++r) {
      const Tensor* ins[1] = {&x};
      const int outs[1] = {model->graph_outputs[0]};
      auto out = (*plan)->run(ins, outs, &pool, nullptr);
      if (!out || std::memcmp((*out)[0].data(), want.data(), want.nbytes()) != 0) ++bad;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(DynamicPlan, ShapesFollowEachRunsValuesAndKernelsAreKept) {
  // y = Relu(Reshape(x, shape)): Reshape's output shape depends on the run's `shape`, and Relu's
  // on Reshape's. Runs alternate targets, so any answer kept from an earlier run for the wrong
  // shape shows.
  ModelBuilder b;
  b.input("x", DType::F32, {2, kK})
      .input("shape", DType::I64, {2})
      .node("Reshape", {"x", "shape"}, {"r"}, "reshape")
      .node("Relu", {"r"}, {"y"}, "relu")
      .output("y", DType::F32);
  auto model = load(b);
  KernelCache cache;
  PlanOptions po;
  po.kernels = &cache;
  auto plan = Plan::create(model, {{DType::F32, Shape{2, kK}}, {DType::I64, Shape{2}}}, po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  ASSERT_TRUE((*plan)->dynamic());
  const Tensor x = random_input(2, 3);
  for (const Shape& target : {Shape{1, 2 * kK}, Shape{2 * kK, 1}, Shape{1, 2 * kK}, Shape{kK, 2}}) {
    Tensor shape = Tensor::empty(DType::I64, {2});
    shape.data_as<int64_t>()[0] = target[0];
    shape.data_as<int64_t>()[1] = target[1];
    const Tensor* ins[2] = {&x, &shape};
    const int outs[1] = {model->graph_outputs[0]};
    auto out = (*plan)->run(ins, outs, nullptr, nullptr);
    ASSERT_TRUE(out) << out.error().to_string();
    ASSERT_EQ((*out)[0].shape(), target);
    for (int64_t i = 0; i < x.numel(); ++i)
      EXPECT_EQ((*out)[0].data_as<float>()[i], std::max(x.data_as<float>()[i], 0.0f));
  }
  // The kernels the runs made serve later runs and plans.
  const int relu = node_index(*model, "Relu");
  const DType f32[1] = {DType::F32};
  const auto* def = kernels::KernelRegistry::global().find("", "Relu", model->nodes[relu].opset, f32);
  ASSERT_NE(def, nullptr);
  const auto entry = cache.find(relu, f32);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->def, def);
  EXPECT_NE(entry->kernel, nullptr);
}

TEST(KernelCache, MatchesNodeAndDtypes) {
  KernelCache cache;
  const DType f32[2] = {DType::F32, DType::F32};
  const DType f64[2] = {DType::F64, DType::F64};
  const auto* def = kernels::KernelRegistry::global().find("", "MatMul", 13, f32);
  ASSERT_NE(def, nullptr);
  auto k = std::make_shared<const CopyingMatMul>(Tensor::zeros(DType::F32, {kK, kN}));
  cache.insert(3, f32, {def, "x:tactic", k});
  const auto hit = cache.find(3, f32);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->kernel, k);
  EXPECT_EQ(hit->def, def);
  EXPECT_EQ(hit->label, "x:tactic");
  EXPECT_FALSE(cache.find(2, f32).has_value());
  EXPECT_FALSE(cache.find(3, f64).has_value());
}

}  // namespace
}  // namespace ignis::runtime
