// SPDX-License-Identifier: Apache-2.0
// Batch slicing: which steps may run a slice of the batch at a time, how runs are formed, and
// that a plan running them slice by slice computes what it computes layer by layer and what
// each sample computes alone, for values that live inside a run, cross its borders, leave it as
// graph outputs, and a batch that the slice does not divide.
#include "runtime/batch_slicing.h"

#include <gtest/gtest.h>

#include <random>

#include "runtime/model.h"
#include "runtime/plan.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis::runtime {
namespace {

using testing::ModelBuilder;

ir::Node node_of(const std::string& op, int inputs, const std::string& domain = "") {
  ir::Node n;
  n.op_type = op;
  n.domain = domain;
  n.inputs.assign(static_cast<size_t>(inputs), "in");
  n.outputs = {"out"};
  return n;
}

std::optional<PerSampleStep> step_of(const ir::Node& n, const std::vector<ir::ValueType>& ins,
                                     const std::vector<bool>& constant, const std::vector<ir::ValueType>& outs) {
  std::vector<const ir::ValueType*> ptrs;
  for (const auto& t : ins) ptrs.push_back(t.dtype == DType::Undefined ? nullptr : &t);
  // Any tensor marks a constant input: the rules read only whether there is one.
  static const Tensor some_constant = Tensor::zeros(DType::F32, Shape{1});
  std::vector<const Tensor*> constants;
  for (bool c : constant) constants.push_back(c ? &some_constant : nullptr);
  return per_sample_step(n, ptrs, constants, outs);
}

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

const ir::ValueType kImages{DType::F32, Shape{4, 8, 5, 5}};

TEST(PerSampleStep, ConvSlicesItsInputAndKeepsWeights) {
  const ir::ValueType w{DType::F32, Shape{4, 8, 3, 3}};  // dimension 0 equals the batch by chance
  auto s = step_of(node_of("Conv", 2), {kImages, w}, {false, true}, {{DType::F32, Shape{4, 4, 3, 3}}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->batch, 4);
  EXPECT_EQ(s->sliced, (std::vector<bool>{true, false}));
  EXPECT_EQ(s->image_bytes, (8u * 25 + 4 * 9) * sizeof(float));
  // Weights computed at run time are shared by every sample: not sliceable.
  EXPECT_FALSE(step_of(node_of("Conv", 2), {kImages, w}, {false, false}, {{DType::F32, Shape{4, 4, 3, 3}}}));
}

TEST(PerSampleStep, BroadcastOperands) {
  const ir::ValueType per_channel{DType::F32, Shape{1, 8, 1, 1}}, lower_rank{DType::F32, Shape{8, 1, 1}};
  const ir::ValueType per_sample{DType::F32, Shape{4, 8, 1, 1}};
  auto s = step_of(node_of("Add", 2), {kImages, per_channel}, {false, true}, {kImages});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sliced, (std::vector<bool>{true, false}));
  s = step_of(node_of("Mul", 2), {kImages, lower_rank}, {false, true}, {kImages});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sliced, (std::vector<bool>{true, false}));
  // A per-sample scale (squeeze-excite) is sliced with the images, constant or not.
  s = step_of(node_of("Mul", 2), {kImages, per_sample}, {false, false}, {kImages});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sliced, (std::vector<bool>{true, true}));
  // A run-time operand broadcast over the batch is read whole by every slice: refused.
  EXPECT_FALSE(step_of(node_of("Add", 2), {kImages, per_channel}, {false, false}, {kImages}));
}

TEST(PerSampleStep, RefusesWhatMixesSamples) {
  const ir::ValueType pooled{DType::F32, Shape{4, 8, 2, 2}}, indices{DType::I64, Shape{4, 8, 2, 2}};
  EXPECT_TRUE(step_of(node_of("MaxPool", 1), {kImages}, {false}, {pooled}));
  ir::Node with_indices = node_of("MaxPool", 1);
  with_indices.outputs = {"out", "indices"};  // indices count across the whole batch
  EXPECT_FALSE(step_of(with_indices, {kImages}, {false}, {pooled, indices}));
  EXPECT_FALSE(step_of(node_of("Softmax", 1), {kImages}, {false}, {kImages}));  // not known per-sample
  EXPECT_FALSE(step_of(node_of("Reshape", 2), {kImages, {DType::I64, Shape{4}}}, {false, true}, {kImages}));
  ir::Node concat0 = node_of("Concat", 2);
  concat0.attrs.set("axis", int_attr(0));
  EXPECT_FALSE(step_of(concat0, {kImages, kImages}, {false, false}, {{DType::F32, Shape{8, 8, 5, 5}}}));
  ir::Node concat1 = node_of("Concat", 2);
  concat1.attrs.set("axis", int_attr(-3));
  auto s = step_of(concat1, {kImages, kImages}, {false, false}, {{DType::F32, Shape{4, 16, 5, 5}}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->sliced, (std::vector<bool>{true, true}));
  // Batch 1 has nothing to slice.
  const ir::ValueType one{DType::F32, Shape{1, 8, 5, 5}};
  EXPECT_FALSE(step_of(node_of("Relu", 1), {one}, {false}, {one}));
}

std::optional<PerSampleStep> sized(int64_t batch, size_t image_bytes) {
  PerSampleStep s;
  s.batch = batch;
  s.image_bytes = image_bytes;
  return s;
}

TEST(FindSliceRuns, HysteresisSliceSizeAndBreaks) {
  SlicingOptions o;
  o.enabled = true;
  o.min_batch_bytes = 800;  // per sample at batch 8: wide >= 100 bytes, carried >= 50
  o.slice_bytes = 400;
  const std::vector<std::optional<PerSampleStep>> steps = {
      sized(8, 100),  // 0: run A starts
      sized(8, 60),   // 1: narrower, carried
      sized(8, 150),  // 2: widest of A: 400 / 150 -> 2 samples per slice
      sized(8, 60),   // 3: narrower at the end: trimmed
      std::nullopt,   // 4: not per-sample
      sized(8, 120),  // 5: alone: no run
      sized(4, 200),  // 6: another batch
      sized(8, 100),  // 7: run B
      sized(8, 100),  // 8
      sized(8, 10),   // 9: too narrow to carry
      sized(8, 500),  // 10: lone wide step
  };
  const auto runs = find_slice_runs(steps, o);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].first, 0);
  EXPECT_EQ(runs[0].last, 3);
  EXPECT_EQ(runs[0].batch, 8);
  EXPECT_EQ(runs[0].slice, 2);
  EXPECT_EQ(runs[1].first, 7);
  EXPECT_EQ(runs[1].last, 9);
  EXPECT_EQ(runs[1].slice, 4);
  o.enabled = false;
  EXPECT_TRUE(find_slice_runs(steps, o).empty());
}

TEST(SlicingOptions, FollowTheLastLevelCache) {
  constexpr size_t kMiB = size_t{1} << 20;
  const SlicingOptions unknown = slicing_options_for_cache(0), defaults;
  EXPECT_EQ(unknown.min_batch_bytes, defaults.min_batch_bytes);
  EXPECT_EQ(unknown.slice_bytes, defaults.slice_bytes);
  const SlicingOptions l3_32 = slicing_options_for_cache(32 * kMiB);  // the defaults' machine
  EXPECT_EQ(l3_32.min_batch_bytes, 16 * kMiB);
  EXPECT_EQ(l3_32.slice_bytes, 8 * kMiB);
  const SlicingOptions small = slicing_options_for_cache(6 * kMiB);
  EXPECT_EQ(small.min_batch_bytes, 4 * kMiB);
  EXPECT_EQ(small.slice_bytes, 2 * kMiB);
  const SlicingOptions large = slicing_options_for_cache(512 * kMiB);
  EXPECT_EQ(large.min_batch_bytes, 64 * kMiB);
  EXPECT_EQ(large.slice_bytes, 32 * kMiB);
}

// x [N, 3, 9, 9] -> Reshape (not per-sample: the run starts after it) -> Conv -> Relu (r) ->
// Conv -> Add r (skip inside the run) -> Mul by a per-channel constant (s: also a graph
// output) -> MaxPool -> GlobalAveragePool -> Flatten (ends the run) -> MatMul -> y; and
// z = GlobalAveragePool(r) after the run (r crosses the run's end).
ModelBuilder conv_chain() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  const auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
  };
  ModelBuilder b;
  b.input("x", DType::F32, {-1, 3, 9, 9}, {"batch"})
      .initializer_i64("shape", {4}, {0, 3, 9, 9})
      .initializer_f32("W1", {8, 3, 3, 3}, values(8 * 3 * 9))
      .initializer_f32("B1", {8}, values(8))
      .initializer_f32("W2", {8, 8, 3, 3}, values(8 * 8 * 9))
      .initializer_f32("k", {1, 8, 1, 1}, values(8))
      .initializer_f32("Wfc", {8, 5}, values(40))
      .node("Reshape", {"x", "shape"}, {"x1"}, "reshape")
      .node("Conv", {"x1", "W1", "B1"}, {"a"}, "conv1")
      .ints_attr("pads", {1, 1, 1, 1})
      .node("Relu", {"a"}, {"r"}, "relu")
      .node("Conv", {"r", "W2"}, {"c"}, "conv2")
      .ints_attr("pads", {1, 1, 1, 1})
      .node("Add", {"c", "r"}, {"sum"}, "skip")
      .node("Mul", {"sum", "k"}, {"s"}, "scale")
      .node("MaxPool", {"s"}, {"p"}, "pool")
      .ints_attr("kernel_shape", {3, 3})
      .ints_attr("strides", {2, 2})
      .node("GlobalAveragePool", {"p"}, {"g"}, "gap")
      .node("Flatten", {"g"}, {"f"}, "flatten")
      .node("MatMul", {"f", "Wfc"}, {"y"}, "fc")
      .node("GlobalAveragePool", {"r"}, {"z"}, "gap_r")
      .output("y", DType::F32)
      .output("s", DType::F32)
      .output("z", DType::F32);
  return b;
}

std::shared_ptr<Model> load(const ModelBuilder& b) { return testing::load_runtime_model(b); }

Result<std::vector<Tensor>> run(const Plan& plan, const Model& m, const Tensor& x, ThreadPool* pool) {
  const Tensor* ins[1] = {&x};
  return plan.run(ins, m.graph_outputs, pool, nullptr);
}

void expect_near(const Tensor& got, const Tensor& want, int64_t offset, const std::string& what) {
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data_as<float>()[i], want.data_as<float>()[offset + i], 1e-5f) << what << " element " << i;
}

TEST(BatchSlicedPlan, MatchesLayerwiseAndSingleSamples) {
  auto model = load(conv_chain());
  constexpr int64_t kBatch = 5;
  Tensor x = Tensor::empty(DType::F32, {kBatch, 3, 9, 9});
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = normal(rng);
  const std::vector<ir::ValueType> sig = {{DType::F32, Shape{kBatch, 3, 9, 9}}};

  auto layerwise = Plan::create(model, sig, {});
  ASSERT_TRUE(layerwise) << layerwise.error().to_string();
  EXPECT_TRUE((*layerwise)->slice_runs().empty());

  PlanOptions po;
  po.slicing.enabled = true;
  po.slicing.min_batch_bytes = 1;
  // The widest step is the skip Add: c, r and its output, 3 * 8 * 81 floats per sample; two
  // samples per slice leave a last slice of one.
  po.slicing.slice_bytes = 2 * 3 * 8 * 81 * sizeof(float);
  auto sliced = Plan::create(model, sig, po);
  ASSERT_TRUE(sliced) << sliced.error().to_string();
  ASSERT_EQ((*sliced)->slice_runs().size(), 1u);
  const SliceRun& r = (*sliced)->slice_runs()[0];
  EXPECT_EQ(r.first, 1);  // after the Reshape
  EXPECT_EQ(r.last, 8);   // conv1 .. gap; Flatten ends it
  EXPECT_EQ(r.slice, 2);
  EXPECT_GT((*sliced)->slice_arena_bytes(), 0u);

  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    auto want = run(**layerwise, *model, x, &pool);
    auto got = run(**sliced, *model, x, &pool);
    ASSERT_TRUE(want) << want.error().to_string();
    ASSERT_TRUE(got) << got.error().to_string();
    for (size_t o = 0; o < got->size(); ++o) {
      ASSERT_EQ((*got)[o].shape(), (*want)[o].shape());
      expect_near((*got)[o], (*want)[o], 0, "output " + std::to_string(o));
    }
    // Each sample alone, through a batch-1 plan.
    auto single = Plan::create(model, {{DType::F32, Shape{1, 3, 9, 9}}}, {});
    ASSERT_TRUE(single);
    for (int64_t b = 0; b < kBatch; ++b) {
      const Tensor xb = Tensor::view(DType::F32, Shape{1, 3, 9, 9}, x.data_as<float>() + b * 3 * 81);
      auto one = run(**single, *model, xb, &pool);
      ASSERT_TRUE(one);
      for (size_t o = 0; o < one->size(); ++o)
        expect_near((*one)[o], (*got)[o], b * (*one)[o].numel(), "sample " + std::to_string(b));
    }
  }
}

}  // namespace
}  // namespace ignis::runtime
