// SPDX-License-Identifier: Apache-2.0
// The x86 float32 ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare and ReduceL2
// kernels. The reference's coalesced layout (kernels/ref/reduce_internal.h) decides the form:
// reduced axes innermost ([rows, n]) or between kept ones ([outer, m, n], also [m, n]) go to
// reduce_avx2.cc; any other interleaving, empty inputs and noop_with_empty_axes go to the
// reference kernel. Built without ISA flags, like every registration file.
#include "kernels/ref/reduce_internal.h"
#include "kernels/x86/reduce_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

template <ReduceOp kOp>
class ReduceKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    constexpr const char* kNames[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare",
                                      "ReduceL2"};
    auto k = std::make_unique<ReduceKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", kNames[static_cast<int>(kOp)], init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    // The opset from which the axes are an input: 13 for ReduceSum, 18 for the others.
    const ref::ReduceLayout l = ref::make_reduce_layout(ctx, kOp == ReduceOp::Sum ? 13 : 18);
    const Tensor& x = ctx.input(0);
    if (l.noop || x.numel() == 0 || l.rank == 0) return reference_->run(ctx);
    const float* px = x.data_as<float>();
    float* py = ctx.output(0).data_as<float>();
    const int r = l.rank;
    if (l.reduced[r - 1] && (r == 1 || (r == 2 && !l.reduced[0]))) {
      reduce_rows_f32_avx2(kOp, px, py, l.out_numel, l.count, ctx.pool());
      return Status::ok();
    }
    if (!l.reduced[r - 1] && r >= 2 && l.reduced[r - 2] && (r == 2 || (r == 3 && !l.reduced[0]))) {
      reduce_columns_f32_avx2(kOp, px, py, r == 3 ? l.dims[0] : 1, l.dims[r - 2], l.dims[r - 1], ctx.pool());
      return Status::ok();
    }
    return reference_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> reference_;  // other layouts, empty inputs, noop_with_empty_axes
};

template <ReduceOp kOp>
Result<std::unique_ptr<Kernel>> create_reduce(const KernelInit& init) {
  return ReduceKernel<kOp>::create(init);
}

}  // namespace

void register_reduce(KernelRegistry& r) {
  constexpr DTypeSet kF32{DType::F32};
  r.add({.domain = "", .op_type = "ReduceSum", .since_opset = 1, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/reducesum_f32_avx2", .factory = create_reduce<ReduceOp::Sum>});
  r.add({.domain = "", .op_type = "ReduceMean", .since_opset = 1, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/reducemean_f32_avx2", .factory = create_reduce<ReduceOp::Mean>});
  r.add({.domain = "", .op_type = "ReduceMax", .since_opset = 1, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/reducemax_f32_avx2", .factory = create_reduce<ReduceOp::Max>});
  r.add({.domain = "", .op_type = "ReduceMin", .since_opset = 1, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/reducemin_f32_avx2", .factory = create_reduce<ReduceOp::Min>});
  r.add({.domain = "", .op_type = "ReduceSumSquare", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/reducesumsquare_f32_avx2", .factory = create_reduce<ReduceOp::SumSquare>});
  r.add({.domain = "", .op_type = "ReduceL2", .since_opset = 1, .types = kF32, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/reducel2_f32_avx2", .factory = create_reduce<ReduceOp::L2>});
}

}  // namespace ignis::kernels::x86
