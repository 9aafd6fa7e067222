// SPDX-License-Identifier: Apache-2.0
// The x86 BatchNormalization kernel (inference), float32: y = x * a[c] + b[c] per channel
// plane, a = scale / sqrt(var + epsilon) and b = B - mean * a formed in double per run (a few
// hundred channels) and rounded to float32, then one FMA per element (pad_norm_avx2.cc); the
// planes are split over the pool. Any rank >= 2, and the per-element parameters of spatial = 0
// (before opset 9) as the reference reads them: slot r % slots for row r. Training mode and
// parameters of another float type go to the reference kernel. Built without ISA flags.
#include <cmath>

#include "kernels/x86/pad_norm_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// Elements below which a chunk of planes stays on one thread.
constexpr int64_t kPlaneElements = int64_t{1} << 15;

class BatchNormKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<BatchNormKernel>();
    bool fast = !(init.opset >= 14 && init.attrs.get_int("training_mode", 0) == 1);
    for (size_t i = 1; i < 5; ++i) fast &= i < init.input_dtypes.size() && init.input_dtypes[i] == DType::F32;
    if (!fast) return make_reference_kernel("", "BatchNormalization", init);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t slots = ctx.input(1).numel();
    const int64_t n = x.dim(0);
    if (x.numel() == 0 || slots == 0) return Status::ok();
    const float *scale = ctx.input(1).data_as<float>(), *bias = ctx.input(2).data_as<float>();
    const float *mean = ctx.input(3).data_as<float>(), *var = ctx.input(4).data_as<float>();
    const double eps = ctx.attrs().get_float("epsilon", 1e-5f);
    auto* ab = static_cast<float*>(ctx.scratch(2 * static_cast<size_t>(slots) * sizeof(float)));
    for (int64_t c = 0; c < slots; ++c) {
      const double a = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      ab[2 * c] = static_cast<float>(a);
      ab[2 * c + 1] = static_cast<float>(bias[c] - mean[c] * a);
    }
    const int64_t inner = x.numel() / n / slots;
    const float* xs = x.data_as<float>();
    float* ys = ctx.output(0).data_as<float>();
    const int64_t grain = std::max<int64_t>(1, kPlaneElements / std::max<int64_t>(inner, 1));
    parallel_for(ctx.pool(), n * slots, grain, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % slots;
        scale_shift_f32_avx2(xs + r * inner, ys + r * inner, inner, ab[2 * c], ab[2 * c + 1]);
      }
    });
    return Status::ok();
  }
};

}  // namespace

void register_nn_norm(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "BatchNormalization", .since_opset = 1, .types = DTypeSet{DType::F32},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/batchnormalization_f32_avx2",
         .factory = BatchNormKernel::create});
}

}  // namespace ignis::kernels::x86
