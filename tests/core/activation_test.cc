// SPDX-License-Identifier: Apache-2.0
// The shared activation vocabulary: every name maps to its kind and back, the attributes are
// read with their documented defaults, and each formula matches its definition in double
// precision (docs/ops_ai_ignis.md, "Activations").
#include "core/activation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ignis {
namespace {

TEST(Activation, NamesRoundTrip) {
  ASSERT_EQ(activation_names().size(), 10u);
  for (std::string_view name : activation_names()) {
    const auto kind = activation_from_name(name);
    ASSERT_TRUE(kind) << name;
    EXPECT_EQ(activation_name(*kind), name);
  }
  EXPECT_EQ(activation_from_name(""), Activation::None);
  EXPECT_FALSE(activation_from_name("relu"));  // names are case-sensitive, as ONNX op types
  EXPECT_FALSE(activation_from_name("Tanh"));
}

Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}

Attribute string_attr(const char* s) {
  Attribute a;
  a.kind = Attribute::Kind::String;
  a.s = s;
  return a;
}

TEST(Activation, ReadsAttributesWithDefaults) {
  AttrMap attrs;
  EXPECT_EQ(read_activation(attrs).kind, Activation::None);
  attrs.set("activation", string_attr("LeakyRelu"));
  ActivationSpec a = read_activation(attrs);
  EXPECT_EQ(a.kind, Activation::LeakyRelu);
  EXPECT_EQ(a.alpha, 0.01f);
  attrs.set("activation", string_attr("HardSigmoid"));
  a = read_activation(attrs);
  EXPECT_EQ(a.alpha, 0.2f);
  EXPECT_EQ(a.beta, 0.5f);
  attrs.set("activation", string_attr("Clip"));
  attrs.set("activation_min", float_attr(-1.5f));
  a = read_activation(attrs);
  EXPECT_EQ(a.lo, -1.5f);
  EXPECT_TRUE(std::isinf(a.hi) && a.hi > 0);
}

double reference(Activation k, double x, double alpha, double beta, double lo, double hi) {
  switch (k) {
    case Activation::None: return x;
    case Activation::Relu: return x < 0 ? 0 : x;
    case Activation::Clip: return std::min(std::max(x, lo), hi);
    case Activation::LeakyRelu: return x < 0 ? alpha * x : x;
    case Activation::Sigmoid: return 1 / (1 + std::exp(-x));
    case Activation::HardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
    case Activation::HardSwish: return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    case Activation::SiLU: return x / (1 + std::exp(-x));
    case Activation::Gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::GeluTanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return NAN;
}

TEST(Activation, FormulasMatchTheirDefinitions) {
  for (std::string_view name : activation_names()) {
    ActivationSpec a;
    a.kind = *activation_from_name(name);
    a.alpha = 0.3f;
    a.beta = 0.4f;
    a.lo = -2.0f;
    a.hi = 3.0f;
    std::vector<float> v;
    for (float x = -8.0f; x <= 8.0f; x += 0.37f) v.push_back(x);
    std::vector<float> batch = v;
    activate(a, batch.data(), static_cast<int64_t>(batch.size()));
    for (size_t i = 0; i < v.size(); ++i) {
      const double want = reference(a.kind, v[i], a.alpha, a.beta, a.lo, a.hi);
      EXPECT_NEAR(activate(a, v[i]), want, 1e-6 + 1e-5 * std::abs(want)) << name << " at " << v[i];
      EXPECT_EQ(batch[i], activate(a, v[i])) << name << " at " << v[i];
    }
  }
  ActivationSpec hs;
  hs.kind = Activation::HardSigmoid;
  hs.alpha = 0.2f;
  hs.beta = 0.5f;
  EXPECT_TRUE(std::isnan(activate(hs, NAN)));  // NaN stays NaN, as ONNX's HardSigmoid
}

}  // namespace
}  // namespace ignis
