// SPDX-License-Identifier: Apache-2.0
// The x86 Transpose kernel: 4-byte elements whose coalesced view is a transpose of a plane
// (2-D, batched 2-D, NCHW <-> NHWC and any permutation that moves the innermost source dim)
// go to the AVX2 8x8 blocks of transpose_avx2.cc; every other view is the reference's strided
// copy. Built without ISA flags, like every registration file.
#include <cstddef>

#include "kernels/ref/tensor_internal.h"
#include "kernels/x86/transpose_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

Status transpose_b32(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> dims, strides, d, s;
  ref::tensor_ops::transpose_view(in, ctx.attrs(), dims, strides);
  if (!ref::tensor_ops::coalesce_view(dims, strides, d, s)) return Status::ok();
  const int last = static_cast<int>(d.size()) - 1;
  if (last >= 1 && s[last] != 1 && d[last] >= 8) {
    for (int k = 0; k < last; ++k) {
      if (s[k] != 1 || d[k] < 8) continue;
      // Strips of 32 output rows: 32 elements of each of up to d[last] source lines and 32
      // output rows stay within L1 for rows of a few thousand elements.
      auto* out = static_cast<std::byte*>(ctx.output(0).data());
      const auto* src = static_cast<const std::byte*>(in.data());
      ref::tensor_ops::for_each_transpose_strip(
          d, s, k, 32, ctx.pool(), [&](int64_t dst_off, int64_t src_off, int64_t ok, int64_t k0, int64_t k1) {
            transpose_strip_b32_avx2(out + dst_off * 4, src + src_off * 4, k0, k1, ok, d[last], s[last]);
          });
      return Status::ok();
    }
  }
  ref::tensor_ops::strided_copy(ctx.output(0).data(), in.data(), dims, strides, 4, ctx.pool());
  return Status::ok();
}

}  // namespace

void register_transpose(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Transpose", .since_opset = 1,
         .types = DTypeSet{DType::F32, DType::I32, DType::U32}, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/transpose_b32_avx2", .fn = transpose_b32});
}

}  // namespace ignis::kernels::x86
