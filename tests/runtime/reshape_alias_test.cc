// SPDX-License-Identifier: Apache-2.0
// The memory plan places a Reshape-like step's output on its input's bytes when the step is
// the input's last reader, and skips the step: the values must be those of a copy even while
// later steps reuse the arena around the shared buffer, and an input still read afterwards
// must keep its own buffer. Expected values are computed here from the inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "ignis/session.h"
#include "testing/model_builder.h"
#include "testing/runtime_model.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

Tensor input() {
  Tensor x = Tensor::empty(DType::F32, Shape{2, 6});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = 0.37f * static_cast<float>(i) - 2.0f;
  return x;
}

// y = Reshape(Relu(x)) + Reshape(Exp(Neg(x))) [3, 4], with `a_read_later`: also z = Relu(x) * 2,
// read after the first Reshape. Between the first Reshape and the Add, two more [2, 6] values
// are made, which the arena places wherever the plan says the Relu's bytes are free.
ModelBuilder model(bool a_read_later) {
  ModelBuilder b;
  b.input("x", DType::F32, {2, 6})
      .initializer_i64("shape", {2}, {3, 4})
      .initializer_f32("two", {}, {2.0f})
      .node("Relu", {"x"}, {"a"}, "relu")
      .node("Reshape", {"a", "shape"}, {"b"}, "reshape_a")
      .node("Neg", {"x"}, {"c"}, "neg")
      .node("Exp", {"c"}, {"d"}, "exp")
      .node("Reshape", {"d", "shape"}, {"e"}, "reshape_d")
      .node("Add", {"b", "e"}, {"y"}, "add")
      .output("y", DType::F32);
  if (a_read_later) b.node("Mul", {"a", "two"}, {"z"}, "mul").output("z", DType::F32);
  return b;
}

TEST(ReshapeAlias, SharedBufferKeepsItsValuesWhileTheArenaIsReused) {
  for (bool a_read_later : {false, true}) {
    SCOPED_TRACE(a_read_later ? "input read after the Reshape" : "Reshape is the last reader");
    auto s = testing::open_unoptimized(model(a_read_later));  // every Reshape as written
    ASSERT_TRUE(s) << s.error().to_string();
    const Tensor x = input();
    std::vector<OpTiming> timings;
    auto out = s->run_profiled({{"x", x}}, &timings,
                               a_read_later ? std::vector<std::string>{"y", "z"} : std::vector<std::string>{"y"});
    ASSERT_TRUE(out) << out.error().to_string();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.shape(), (Shape{3, 4}));
    for (int64_t i = 0; i < 12; ++i) {
      const float v = x.data_as<float>()[i];
      EXPECT_FLOAT_EQ(y.data_as<float>()[i], std::max(v, 0.0f) + std::exp(-v)) << "element " << i;
      if (a_read_later) {
        EXPECT_FLOAT_EQ((*out)[1].data_as<float>()[i], 2.0f * std::max(v, 0.0f));
      }
    }
    // The aliased Reshapes do not run; the one whose input is read later does.
    int reshapes = 0;
    for (const OpTiming& t : timings) reshapes += t.op_type == "Reshape";
    EXPECT_EQ(reshapes, a_read_later ? 1 : 0);
  }
}

}  // namespace
}  // namespace ignis
