// SPDX-License-Identifier: Apache-2.0
// with_activation: turns a run-time Activation into a template argument, so that a loop over
// vectors is compiled once per activation instead of switching per vector. Free of
// instruction-set intrinsics: the AVX2 and AVX-512 activation headers both use it. Internal
// linkage on purpose (see gemm_blocked.h).
#pragma once

#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {
namespace {

// Calls f.template operator()<A>() with A = a, so that a loop over vectors can be compiled once
// per activation instead of switching per vector.
template <class F>
[[gnu::always_inline]] inline decltype(auto) with_activation(Activation a, F&& f) {
  using enum Activation;
  switch (a) {
    case None: break;
    case Relu: return f.template operator()<Relu>();
    case Clip: return f.template operator()<Clip>();
    case LeakyRelu: return f.template operator()<LeakyRelu>();
    case Sigmoid: return f.template operator()<Sigmoid>();
    case HardSigmoid: return f.template operator()<HardSigmoid>();
    case HardSwish: return f.template operator()<HardSwish>();
    case SiLU: return f.template operator()<SiLU>();
    case Gelu: return f.template operator()<Gelu>();
    case GeluTanh: return f.template operator()<GeluTanh>();
  }
  return f.template operator()<None>();
}

}  // namespace
}  // namespace ignis::kernels::x86
