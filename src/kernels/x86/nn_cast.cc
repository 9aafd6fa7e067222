// SPDX-License-Identifier: Apache-2.0
// x86 Cast: int32, uint8 and int8 to float32 vectorized (cast_avx2.cc); every other pair of
// types runs the reference kernel. Dynamically quantized models cast each ConvInteger's and
// MatMulInteger's int32 sums to float32 before their scale (onnxruntime's quantize_dynamic
// writes ConvInteger -> Cast -> Mul), where the reference's one value at a time cost 10% of
// mobilenet_v2's run.
#include <algorithm>

#include "kernels/x86/cast_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

class CastKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<CastKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "Cast", init, init.input_dtypes[0]));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const DType from = x.dtype();
    if (y.dtype() != DType::F32 || (from != DType::I32 && from != DType::U8 && from != DType::I8))
      return reference_->run(ctx);
    const int64_t n = x.numel();
    const size_t width = dtype_size(from);
    const auto* in = static_cast<const uint8_t*>(x.data());
    float* out = y.data_as<float>();
    ThreadPool* pool = ctx.pool();
    const int parts = parallel_parts(pool, n, n / 4096 + 1);
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t i0 = n * part / parts, i1 = n * (part + 1) / parts;
        cast_to_f32_avx2(from, in + static_cast<size_t>(i0) * width, out + i0, i1 - i0);
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

void register_nn_cast(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Cast", .since_opset = 6, .types = DTypeSet{DType::I32, DType::U8, DType::I8},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/cast_to_f32_avx2",
         .factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> { return CastKernel::create(init); }});
}

}  // namespace ignis::kernels::x86
