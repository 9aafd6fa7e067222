// SPDX-License-Identifier: Apache-2.0
// Registration of the x86 Resize and Upsample kernels (resize_avx2.cc). Built without ISA
// flags: it runs on every CPU, while the kernels themselves are chosen only where AVX2 is
// available.
#include "kernels/x86/resize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

void register_nn_resize(KernelRegistry& r) {
  constexpr DTypeSet kF32{DType::F32};
  r.add({.domain = "", .op_type = "Resize", .since_opset = 10, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/resize_f32_avx2", .factory = resize_f32_create});
  r.add({.domain = "", .op_type = "Upsample", .since_opset = 7, .until_opset = 9, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/upsample_f32_avx2", .factory = upsample_f32_create});
}

}  // namespace ignis::kernels::x86
