// SPDX-License-Identifier: Apache-2.0
// x86 ai.ignis QLinearLookup: the elements split over the threads, each part looked up 64 bytes
// at a time on CPUs with AVX-512 VBMI (quantize_lookup_avx512vbmi.cc), else 32 at a time with
// AVX2 (quantize_lookup_avx2.cc; the kernel is registered for AVX2 CPUs only).
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/qlinear_lookup.h"
#include "kernels/x86/quantize_lookup.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

Status qlinear_lookup(KernelContext& ctx) {
  const LookupOperands o = lookup_operands(ctx);
  const int64_t n = o.n;
  const bool vbmi = isa_enabled(Isa::Avx512) && cpu_features().avx512vbmi;
  // A part per ~16 Ki bytes (a microsecond of lookups), each a whole number of 64-byte vectors.
  const int parts = parallel_parts(ctx.pool(), n * 4, n / 64 + 1);
  parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t lo = n * part / parts / 64 * 64, hi = part + 1 == parts ? n : n * (part + 1) / parts / 64 * 64;
      if (vbmi) {
        qlinear_lookup_avx512vbmi(o.x + lo, o.flip, o.table, o.y + lo, hi - lo);
      } else {
        qlinear_lookup_avx2(o.x + lo, o.flip, o.table, o.y + lo, hi - lo);
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_quantize_lookup(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "QLinearLookup", .since_opset = 1, .types = DTypeSet{DType::U8, DType::I8},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/qlinearlookup", .fn = qlinear_lookup});
}

}  // namespace ignis::kernels::x86
