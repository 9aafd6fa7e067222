// SPDX-License-Identifier: Apache-2.0
// The activations a fused op applies after its product (FusedConv, FusedMatMul, BlockedConv,
// the x86 GEMM epilogue): one list of kinds and names, the `activation*` attributes read with
// their defaults (docs/ops_ai_ignis.md, "Activations"), and the float32 formulas the reference
// kernels use. The IR, the passes, the kernels and the tests all take them from here.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/attribute.h"

namespace ignis {

enum class Activation { None, Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, SiLU, Gelu, GeluTanh };

// An activation with its parameters.
struct ActivationSpec {
  Activation kind = Activation::None;
  float lo = -INFINITY, hi = INFINITY;  // Clip
  float alpha = 0.0f;                   // LeakyRelu slope, HardSigmoid alpha
  float beta = 0.0f;                    // HardSigmoid beta
};

// The attribute names, in enum order ("" for None).
std::span<const std::string_view> activation_names();
std::string_view activation_name(Activation a);
// nullopt for a name that is not an activation ("" is None).
std::optional<Activation> activation_from_name(std::string_view name);

// `activation`, `activation_min` / `_max` (Clip), `activation_alpha` (default 0.01 for
// LeakyRelu, else 0.2) and `activation_beta` (0.5). Shape inference validated the kinds; an
// unknown name reads as None.
ActivationSpec read_activation(const AttrMap& attrs);

// a(x) in float32, as the standard ops the activation replaces compute it (NaN stays NaN).
float activate(const ActivationSpec& a, float x);
// v[i] = a(v[i]) for i < n.
void activate(const ActivationSpec& a, float* v, int64_t n);

}  // namespace ignis
