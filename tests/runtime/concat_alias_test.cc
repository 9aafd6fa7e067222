// SPDX-License-Identifier: Apache-2.0
// The memory plan makes a Concat's inputs in place in its output's buffer and skips the Concat
// when the output is the inputs' bytes end to end (every dimension before the axis is 1) at
// 64-byte aligned offsets. The values must be those of a copy while the arena is reused around
// the buffer, an input read after the Concat must still hold its own values, a Concat of a
// Concat must nest, and every case the plan cannot place this way must still run the Concat.
// Expected values are computed here from the inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ignis/session.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

Tensor input(int64_t w) {
  Tensor x = Tensor::empty(DType::F32, Shape{1, 2, w});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.37f * static_cast<float>(i % 11) - 2.0f;
  return x;
}

float relu(float v) { return std::max(v, 0.0f); }
float exp_neg(float v) { return std::exp(-v); }
float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

struct Case {
  const char* what;
  int64_t width;         // x is [1, 2, width]
  int64_t axis;          // of the first Concat
  bool repeat = false;   // Concat(a, a) instead of Concat(a, b)
  bool nested = false;   // y2 = Concat(y, Sigmoid(x)) on the same axis
  int concats_run = 0;   // Concat steps that still run
};

// a = Relu(x), b = Exp(Neg(x)); y = Concat(a, b) (or (a, a)); [y2 = Concat(y, Sigmoid(x))];
// out = Mul(y or y2, 1.5); later = Mul(a, 2), read after the Concat.
ModelBuilder model(const Case& c) {
  ModelBuilder b;
  b.input("x", DType::F32, {1, 2, c.width})
      .initializer_f32("k", {}, {1.5f})
      .initializer_f32("two", {}, {2.0f})
      .node("Relu", {"x"}, {"a"}, "relu")
      .node("Neg", {"x"}, {"n"}, "neg")
      .node("Exp", {"n"}, {"b"}, "exp")
      .node("Concat", {"a", c.repeat ? "a" : "b"}, {"y"}, "concat", {{"axis", c.axis}});
  std::string last = "y";
  if (c.nested) {
    b.node("Sigmoid", {"x"}, {"s"}, "sigmoid").node("Concat", {"y", "s"}, {"y2"}, "concat2", {{"axis", c.axis}});
    last = "y2";
  }
  b.node("Mul", {last, "k"}, {"out"}, "scale").output("out", DType::F32);
  b.node("Mul", {"a", "two"}, {"later"}, "later").output("later", DType::F32);
  return b;
}

// The expected Concat of parts [1, 2, w] along axis 1 or 2, times 1.5.
std::vector<float> expected(const Case& c, const Tensor& x) {
  const float* xs = x.data_as<float>();
  std::vector<float (*)(float)> parts = {relu, c.repeat ? relu : exp_neg};
  if (c.nested) parts.push_back(sigmoid);
  std::vector<float> out;
  const int64_t w = c.width;
  if (c.axis == 1) {
    for (auto f : parts)
      for (int64_t i = 0; i < 2 * w; ++i) out.push_back(1.5f * f(xs[i]));
  } else {
    for (int64_t r = 0; r < 2; ++r)
      for (auto f : parts)
        for (int64_t i = 0; i < w; ++i) out.push_back(1.5f * f(xs[r * w + i]));
  }
  return out;
}

TEST(ConcatAlias, InputsMadeInPlaceKeepTheirValues) {
  const Case cases[] = {
      {"inputs end to end", 16, 1},
      {"a Concat of a Concat", 16, 1, false, true},
      {"parts off 64-byte boundaries", 3, 1, false, false, 1},
      {"two outer blocks (axis 2)", 16, 2, false, false, 1},
      {"one input twice", 16, 1, true, false, 1},
      {"nested, off 64-byte boundaries", 3, 1, false, true, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto s = testing::open_unoptimized(model(c));
    ASSERT_TRUE(s) << s.error().to_string();
    const Tensor x = input(c.width);
    // Twice: the second run finds the arena as the first left it.
    for (int round = 0; round < 2; ++round) {
      std::vector<OpTiming> timings;
      auto out = s->run_profiled({{"x", x}}, &timings, {"out", "later"});
      ASSERT_TRUE(out) << out.error().to_string();
      const std::vector<float> want = expected(c, x);
      ASSERT_EQ((*out)[0].numel(), static_cast<int64_t>(want.size()));
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_FLOAT_EQ((*out)[0].data_as<float>()[i], want[i]) << "out element " << i;
      for (int64_t i = 0; i < x.numel(); ++i)
        ASSERT_FLOAT_EQ((*out)[1].data_as<float>()[i], 2.0f * relu(x.data_as<float>()[i])) << "later element " << i;
      int concats = 0;
      for (const OpTiming& t : timings) concats += t.op_type == "Concat";
      EXPECT_EQ(concats, c.concats_run);
    }
  }
}

}  // namespace
}  // namespace ignis
