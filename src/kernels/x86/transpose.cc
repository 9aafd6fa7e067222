// SPDX-License-Identifier: Apache-2.0
// The x86 Transpose kernel: 4-byte elements whose coalesced view is a transpose of a plane
// (2-D, batched 2-D, NCHW <-> NHWC and any permutation that moves the innermost source dim)
// go to the AVX2 8x8 blocks of transpose_avx2.cc, 1-byte elements (the uint8 / int8 tensors
// at the edges of a quantized model's channels-last run) to its 16x16 byte blocks; every other
// view is the reference's strided copy. Built without ISA flags, like every registration file.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/ref/tensor_internal.h"
#include "kernels/x86/transpose_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// A transpose whose coalesced view moves the innermost source dim goes in strips of 32 output
// rows to strip(out, in, k0, k1, ok, n, sj) (element offsets; 32 elements of each of up to
// d[last] source lines and 32 output rows stay within L1 for rows of a few thousand
// elements); any other to the reference's strided copy.
template <size_t kBytes, class StripFn>
Status transpose_strips(KernelContext& ctx, StripFn strip) {
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> dims, strides, d, s;
  ref::tensor_ops::transpose_view(in, ctx.attrs(), dims, strides);
  if (!ref::tensor_ops::coalesce_view(dims, strides, d, s)) return Status::ok();
  const int last = static_cast<int>(d.size()) - 1;
  if (last >= 1 && s[last] != 1 && d[last] >= 8) {
    for (int k = 0; k < last; ++k) {
      if (s[k] != 1 || d[k] < 8) continue;
      auto* out = static_cast<std::byte*>(ctx.output(0).data());
      const auto* src = static_cast<const std::byte*>(in.data());
      ref::tensor_ops::for_each_transpose_strip(
          d, s, k, 32, ctx.pool(), [&](int64_t dst_off, int64_t src_off, int64_t ok, int64_t k0, int64_t k1) {
            strip(out + dst_off * kBytes, src + src_off * kBytes, k0, k1, ok, d[last], s[last]);
          });
      return Status::ok();
    }
  }
  ref::tensor_ops::strided_copy(ctx.output(0).data(), in.data(), dims, strides, kBytes, ctx.pool());
  return Status::ok();
}

Status transpose_b32(KernelContext& ctx) { return transpose_strips<4>(ctx, transpose_strip_b32_avx2); }

Status transpose_b8(KernelContext& ctx) { return transpose_strips<1>(ctx, transpose_strip_b8_avx2); }

}  // namespace

void register_transpose(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Transpose", .since_opset = 1,
         .types = DTypeSet{DType::U8, DType::I8}, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/transpose_b8", .fn = transpose_b8});
  r.add({.domain = "", .op_type = "Transpose", .since_opset = 1,
         .types = DTypeSet{DType::F32, DType::I32, DType::U32}, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/transpose_b32_avx2", .fn = transpose_b32});
}

}  // namespace ignis::kernels::x86
