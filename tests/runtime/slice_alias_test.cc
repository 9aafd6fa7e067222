// SPDX-License-Identifier: Apache-2.0
// The memory plan makes a Slice or Split output a view of its input's bytes, and skips the
// step, when the output is one contiguous run of them (every dimension before the cut is 1,
// the cut has step 1, later dimensions are whole) starting at a 64-byte aligned offset. The
// views must hold the sliced values while the arena is reused around them, the input must keep
// its values for a reader after the views, a view of a view must nest, and every case the plan
// cannot place this way must still run the step. Expected values are computed here from x.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

struct Case {
  const char* what;
  int64_t width;       // x is [1, 6, width]
  int64_t axis;        // the cut: channels (1) or width (2)
  int64_t step = 1;    // the Slice's step
  int steps_run = 0;   // Slice and Split steps that still run
};

// a = Relu(x) [1, 6, w]; s = Slice(a, axis, [1, 5) step `step`); t = Slice(s, axis, [1, 3));
// (p, q) = Split(a, axis, [2, rest]); outputs s*2, t+5, p*3, q+1, and later = -a (read after
// them).
ModelBuilder model(const Case& c) {
  ModelBuilder b;
  b.input("x", DType::F32, {1, 6, c.width})
      .initializer_f32("two", {}, {2.0f})
      .initializer_f32("three", {}, {3.0f})
      .initializer_f32("one", {}, {1.0f})
      .initializer_f32("five", {}, {5.0f})
      .initializer_i64("starts", {1}, {1})
      .initializer_i64("ends", {1}, {5})
      .initializer_i64("starts2", {1}, {1})
      .initializer_i64("ends2", {1}, {3})
      .initializer_i64("axes", {1}, {c.axis})
      .initializer_i64("steps", {1}, {c.step})
      .initializer_i64("split", {2}, {2, (c.axis == 1 ? 6 : c.width) - 2})
      .node("Relu", {"x"}, {"a"}, "relu")
      .node("Slice", {"a", "starts", "ends", "axes", "steps"}, {"s"}, "slice")
      .node("Slice", {"s", "starts2", "ends2", "axes"}, {"t"}, "slice_of_slice")
      .node("Split", {"a", "split"}, {"p", "q"}, "split", {{"axis", c.axis}})
      .node("Mul", {"s", "two"}, {"s2"}, "mul_s")
      .node("Add", {"t", "five"}, {"t5"}, "add_t")
      .node("Mul", {"p", "three"}, {"p3"}, "mul_p")
      .node("Add", {"q", "one"}, {"q1"}, "add_q")
      .node("Neg", {"a"}, {"later"}, "later");
  for (const char* out : {"s2", "t5", "p3", "q1", "later"}) b.output(out, DType::F32);
  return b;
}

// Elements of relu(x) [1, 6, w] at positions `at` along `axis` (in that order), row-major,
// then f.
std::vector<float> cut(const Tensor& x, int64_t axis, const std::vector<int64_t>& at, float (*f)(float)) {
  const int64_t w = x.dim(2);
  auto value = [&](int64_t c, int64_t i) { return f(std::max(0.0f, x.data_as<float>()[c * w + i])); };
  std::vector<float> out;
  if (axis == 1) {
    for (int64_t c : at)
      for (int64_t i = 0; i < w; ++i) out.push_back(value(c, i));
  } else {
    for (int64_t c = 0; c < 6; ++c)
      for (int64_t i : at) out.push_back(value(c, i));
  }
  return out;
}

std::vector<int64_t> range(int64_t lo, int64_t hi, int64_t step = 1) {
  std::vector<int64_t> r;
  for (int64_t i = lo; i < hi; i += step) r.push_back(i);
  return r;
}

TEST(SliceAlias, ViewsHoldTheSlicedValues) {
  const Case cases[] = {
      {"channel cuts on 64-byte rows", 16, 1},
      {"channel cuts off 64-byte boundaries", 3, 1, 1, 3},
      {"cuts of the last axis (rows before it)", 16, 2, 1, 3},
      {"a strided Slice (its own Slice and the Split are views)", 16, 1, 2, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto s = testing::open_unoptimized(model(c));
    ASSERT_TRUE(s) << s.error().to_string();
    Tensor x = Tensor::empty(DType::F32, Shape{1, 6, c.width});
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.29f * static_cast<float>(i % 13) - 1.5f;
    const int64_t extent = c.axis == 1 ? 6 : c.width;
    // s takes positions 1, 1 + step, ... below 5; t the second and third of those.
    const std::vector<int64_t> s_at = range(1, 5, c.step);
    const std::vector<int64_t> t_at(s_at.begin() + 1, s_at.begin() + std::min<size_t>(3, s_at.size()));
    const std::vector<std::vector<float>> want = {
        cut(x, c.axis, s_at, [](float v) { return 2.0f * v; }),
        cut(x, c.axis, t_at, [](float v) { return v + 5.0f; }),
        cut(x, c.axis, range(0, 2), [](float v) { return 3.0f * v; }),
        cut(x, c.axis, range(2, extent), [](float v) { return v + 1.0f; }),
        cut(x, 1, range(0, 6), [](float v) { return -v; }),
    };
    // Twice: the second run finds the arena as the first left it.
    for (int round = 0; round < 2; ++round) {
      std::vector<OpTiming> timings;
      auto out = s->run_profiled({{"x", x}}, &timings, {"s2", "t5", "p3", "q1", "later"});
      ASSERT_TRUE(out) << out.error().to_string();
      for (size_t o = 0; o < want.size(); ++o) {
        ASSERT_EQ((*out)[o].numel(), static_cast<int64_t>(want[o].size())) << "output " << o;
        for (size_t i = 0; i < want[o].size(); ++i)
          ASSERT_FLOAT_EQ((*out)[o].data_as<float>()[i], want[o][i]) << "output " << o << " element " << i;
      }
      int run = 0;
      for (const OpTiming& t : timings) run += t.op_type == "Slice" || t.op_type == "Split";
      EXPECT_EQ(run, c.steps_run);
    }
  }
}

}  // namespace
}  // namespace ignis
