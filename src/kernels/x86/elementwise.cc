// SPDX-License-Identifier: Apache-2.0
// Registration of the x86 elementwise kernels (elementwise_avx2.cc). Built without ISA
// flags: it runs on every CPU, while the kernels are chosen only where AVX2 is available.
#include "kernels/x86/elementwise_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

void register_elementwise(KernelRegistry& r) {
  constexpr DTypeSet kF32{DType::F32};
  // Opset 7 dropped the legacy axis broadcasting; older nodes keep the reference kernels.
  r.add({.domain = "", .op_type = "Add", .since_opset = 7, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/add_f32_avx2", .factory = elementwise_f32_create_add});
  r.add({.domain = "", .op_type = "Sub", .since_opset = 7, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/sub_f32_avx2", .factory = elementwise_f32_create_sub});
  r.add({.domain = "", .op_type = "Mul", .since_opset = 7, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/mul_f32_avx2", .factory = elementwise_f32_create_mul});
  r.add({.domain = "", .op_type = "Div", .since_opset = 7, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/div_f32_avx2", .factory = elementwise_f32_create_div});
  r.add({.domain = "", .op_type = "Max", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/max_f32_avx2", .factory = elementwise_f32_create_max});
  r.add({.domain = "", .op_type = "Min", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/min_f32_avx2", .factory = elementwise_f32_create_min});
  r.add({.domain = "", .op_type = "Pow", .since_opset = 7, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/pow_f32_avx2", .factory = elementwise_f32_create_pow});
  // Opset 6 dropped the legacy consumed_inputs attribute.
  r.add({.domain = "", .op_type = "Log", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/log_f32_avx2", .fn = elementwise_f32_log});
  r.add({.domain = "", .op_type = "Sqrt", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/sqrt_f32_avx2", .fn = elementwise_f32_sqrt});
  r.add({.domain = "", .op_type = "Abs", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/abs_f32_avx2", .fn = elementwise_f32_abs});
  r.add({.domain = "", .op_type = "Neg", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/neg_f32_avx2", .fn = elementwise_f32_neg});
  r.add({.domain = "", .op_type = "Reciprocal", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/reciprocal_f32_avx2", .fn = elementwise_f32_reciprocal});
  r.add({.domain = "", .op_type = "Clip", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/clip_f32_avx2", .fn = elementwise_f32_clip});
  r.add({.domain = "", .op_type = "LeakyRelu", .since_opset = 6, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/leakyrelu_f32_avx2", .fn = elementwise_f32_leaky_relu});
  r.add({.domain = "", .op_type = "Relu", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/relu_f32_avx2", .fn = elementwise_f32_relu});
  r.add({.domain = "", .op_type = "Sigmoid", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/sigmoid_f32_avx2", .fn = elementwise_f32_sigmoid});
  r.add({.domain = "", .op_type = "Tanh", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/tanh_f32_avx2", .fn = elementwise_f32_tanh});
  r.add({.domain = "", .op_type = "Exp", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/exp_f32_avx2", .fn = elementwise_f32_exp});
  r.add({.domain = "", .op_type = "Erf", .since_opset = 9, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/erf_f32_avx2", .fn = elementwise_f32_erf});
  r.add({.domain = "", .op_type = "Gelu", .since_opset = 20, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/gelu_f32_avx2", .fn = elementwise_f32_gelu});
  r.add({.domain = "ai.ignis", .op_type = "Gelu", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/ignis_gelu_f32_avx2", .fn = elementwise_f32_gelu});
}

}  // namespace ignis::kernels::x86
