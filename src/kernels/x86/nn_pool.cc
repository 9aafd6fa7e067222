// SPDX-License-Identifier: Apache-2.0
// Registration of the x86 pooling kernels (pool_avx2.cc, pool_int8_avx2.cc,
// pool_blocked_max_avx512.cc). Built without
// ISA flags: it runs on every CPU, while the kernels themselves are chosen only where AVX2 is
// available.
#include "kernels/x86/pool_avx2.h"
#include "kernels/x86/pool_int8_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

void register_nn_pool(KernelRegistry& r) {
  constexpr DTypeSet kF32{DType::F32};
  r.add({.domain = "", .op_type = "MaxPool", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/maxpool_f32_avx2", .factory = pool_f32_create_max});
  // MaxPool-12 and later take uint8 / int8 (the schema checks the opset).
  r.add({.domain = "", .op_type = "MaxPool", .since_opset = 12, .types = DTypeSet{DType::U8, DType::I8},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/maxpool_int8_avx2", .factory = pool_int8_create_max});
  r.add({.domain = "", .op_type = "AveragePool", .since_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/averagepool_f32_avx2", .factory = pool_f32_create_average});
  r.add({.domain = "", .op_type = "GlobalMaxPool", .since_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/globalmaxpool_f32_avx2",
         .factory = pool_f32_create_global_max});
  r.add({.domain = "", .op_type = "GlobalAveragePool", .since_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/globalaveragepool_f32_avx2",
         .factory = pool_f32_create_global_average});
  r.add({.domain = "ai.ignis", .op_type = "BlockedMaxPool", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/blockedmaxpool_f32_avx2",
         .factory = pool_f32_create_blocked_max});
  r.add({.domain = "ai.ignis", .op_type = "BlockedMaxPool", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/blockedmaxpool_f32_avx512",
         .factory = pool_f32_create_blocked_max_avx512});
}

}  // namespace ignis::kernels::x86
