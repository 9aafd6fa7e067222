// SPDX-License-Identifier: Apache-2.0
// Concat over the thread pool. The output is, per outer index (the dimensions before the
// axis), each input's row in turn; the copy is split into parts of equal bytes of the output,
// each part copying the pieces of the rows it covers, so that a Concat of a few large inputs
// (densenet's feature maps, of one outer block) is shared by every thread as evenly as one of
// many small rows. The memory plan removes the Concats whose inputs it can make in place
// (src/runtime/plan.cc); this kernel runs the rest, e.g. inputs that other Concats read too.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

Status concat_parallel(KernelContext& ctx) {
  Tensor& out = ctx.output(0);
  if (out.numel() == 0) return Status::ok();
  const int64_t rank = out.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < 0) axis += rank;
  const int64_t esize = static_cast<int64_t>(dtype_size(out.dtype()));
  const int64_t outer = out.shape().numel(0, static_cast<int>(axis));
  const int64_t inner = out.shape().numel(static_cast<int>(axis) + 1, static_cast<int>(rank)) * esize;
  const int64_t out_row = out.dim(static_cast<int>(axis)) * inner;
  // Each input's row bytes and where that row starts within an output row.
  std::vector<int64_t> row(static_cast<size_t>(ctx.num_inputs())), start(row.size());
  int64_t at = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    row[static_cast<size_t>(i)] = ctx.input(i).dim(static_cast<int>(axis)) * inner;
    start[static_cast<size_t>(i)] = at;
    at += row[static_cast<size_t>(i)];
  }
  auto* dst = static_cast<std::byte*>(out.data());
  const int64_t total = outer * out_row;
  // Copies output bytes [b0, b1).
  auto copy = [&](int64_t b0, int64_t b1) {
    for (int64_t o = b0 / out_row; o < outer && o * out_row < b1; ++o)
      for (size_t i = 0; i < row.size(); ++i) {
        const int64_t lo = std::max(b0, o * out_row + start[i]), hi = std::min(b1, o * out_row + start[i] + row[i]);
        if (lo >= hi) continue;
        const auto* src = static_cast<const std::byte*>(ctx.input(static_cast<int>(i)).data());
        std::memcpy(dst + lo, src + o * row[i] + (lo - o * out_row - start[i]), static_cast<size_t>(hi - lo));
      }
  };
  const int parts = parallel_parts(ctx.pool(), total / 4, total / 4096 + 1);
  parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) copy(total * part / parts, total * (part + 1) / parts);
  });
  return Status::ok();
}

}  // namespace

void register_concat(KernelRegistry& r) {
  // No ISA: memcpy over the pool, preferred over the reference wherever optimized kernels are.
  r.add({.domain = "",
         .op_type = "Concat",
         .since_opset = 1,
         .types = DTypeSet::all(),
         .priority = 1,
         .role = KernelRole::Optimized,
         .id = "cpu/concat",
         .fn = concat_parallel});
}

}  // namespace ignis::kernels::x86
