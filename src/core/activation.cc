// SPDX-License-Identifier: Apache-2.0
#include "core/activation.h"

#include <algorithm>
#include <array>
#include <string>

namespace ignis {

namespace {

constexpr std::array<std::string_view, 10> kNames = {"",          "Relu",        "Clip",      "LeakyRelu",
                                                     "Sigmoid",   "HardSigmoid", "HardSwish", "SiLU",
                                                     "Gelu",      "GeluTanh"};

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); }

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

// One formula per kind; the loop form below hoists the switch out of the loop.
template <Activation K>
float apply(const ActivationSpec& a, float x) {
  if constexpr (K == Activation::None) return x;
  if constexpr (K == Activation::Relu) return x < 0.0f ? 0.0f : x;
  if constexpr (K == Activation::Clip) return x < a.lo ? a.lo : (x > a.hi ? a.hi : x);
  if constexpr (K == Activation::LeakyRelu) return x < 0.0f ? a.alpha * x : x;
  if constexpr (K == Activation::Sigmoid) return sigmoid(x);
  if constexpr (K == Activation::HardSigmoid) {
    const float y = a.alpha * x + a.beta;
    return std::isnan(y) ? y : std::max(0.0f, std::min(1.0f, y));
  }
  if constexpr (K == Activation::HardSwish) return x * std::max(0.0f, std::min(1.0f, x / 6.0f + 0.5f));
  if constexpr (K == Activation::SiLU) return x * sigmoid(x);
  if constexpr (K == Activation::Gelu) return gelu_erf(x);
  if constexpr (K == Activation::GeluTanh) return gelu_tanh(x);
  return x;
}

template <class F>
decltype(auto) dispatch(Activation k, F&& f) {
  switch (k) {
    case Activation::None: return f.template operator()<Activation::None>();
    case Activation::Relu: return f.template operator()<Activation::Relu>();
    case Activation::Clip: return f.template operator()<Activation::Clip>();
    case Activation::LeakyRelu: return f.template operator()<Activation::LeakyRelu>();
    case Activation::Sigmoid: return f.template operator()<Activation::Sigmoid>();
    case Activation::HardSigmoid: return f.template operator()<Activation::HardSigmoid>();
    case Activation::HardSwish: return f.template operator()<Activation::HardSwish>();
    case Activation::SiLU: return f.template operator()<Activation::SiLU>();
    case Activation::Gelu: return f.template operator()<Activation::Gelu>();
    case Activation::GeluTanh: return f.template operator()<Activation::GeluTanh>();
  }
  return f.template operator()<Activation::None>();
}

}  // namespace

std::span<const std::string_view> activation_names() { return kNames; }

std::string_view activation_name(Activation a) { return kNames[static_cast<size_t>(a)]; }

std::optional<Activation> activation_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Activation>(i);
  return std::nullopt;
}

ActivationSpec read_activation(const AttrMap& attrs) {
  ActivationSpec a;
  a.kind = activation_from_name(attrs.get_string("activation", "")).value_or(Activation::None);
  a.lo = attrs.get_float("activation_min", -INFINITY);
  a.hi = attrs.get_float("activation_max", INFINITY);
  a.alpha = attrs.get_float("activation_alpha", a.kind == Activation::LeakyRelu ? 0.01f : 0.2f);
  a.beta = attrs.get_float("activation_beta", 0.5f);
  return a;
}

float activate(const ActivationSpec& a, float x) {
  return dispatch(a.kind, [&]<Activation K>() { return apply<K>(a, x); });
}

void activate(const ActivationSpec& a, float* v, int64_t n) {
  dispatch(a.kind, [&]<Activation K>() {
    for (int64_t i = 0; i < n; ++i) v[i] = apply<K>(a, v[i]);
  });
}

}  // namespace ignis
