// SPDX-License-Identifier: Apache-2.0
// ai.ignis BlockedMaxPool on x86, X [N, CB, H, W, 16]: each output position is the
// NaN-ignoring max of its window's in-input taps, 16 lanes at a time; the taps of each output
// row and column are computed once per run. Rows of outputs are split over the pool. Windows
// without an input tap go to the reference kernel.
//
// The walk is shared; the instruction set comes as a Lanes policy (pool_avx2.cc: two 8-lane
// vectors; pool_blocked_max_avx512.cc: one 16-lane vector):
//   using V = ...;                                 // 16 floats
//   static V nan();                                // every lane NaN
//   static V max(V acc, const float* x);           // NaN-ignoring max of acc and x[0, 16)
//   static void store(float* y, V v);
// Internal linkage (see gemm_blocked.h): each file compiles its own with its flags.
#pragma once

#include <memory>

#include "core/conv_geometry.h"
#include "kernels/x86/pool_window.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {
namespace {

template <class Lanes>
class BlockedMaxPoolKernel final : public Kernel {
 public:
  static constexpr int64_t kBlock = 16;

  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<BlockedMaxPoolKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", "BlockedMaxPool", init));
    k->ceil_mode_ = init.attrs.get_int("ceil_mode", 0) != 0;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    using namespace pool_window;
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.rank() != 5 || x.dim(4) != kBlock) return reference_->run(ctx);
    if (y.numel() == 0) return Status::ok();
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg,
                           make_window_geometry(ctx.attrs(), x.shape().dims().subspan(2, 2), {}, ceil_mode_));
    const Window2d g = as_2d(wg);
    if (!every_window_has_input(g.h) || !every_window_has_input(g.w)) return reference_->run(ctx);
    const int64_t taps_floats = (g.h.out + g.w.out) * static_cast<int64_t>(sizeof(Taps) / sizeof(float));
    Taps* taps = static_cast<Taps*>(ctx.scratch(static_cast<size_t>(taps_floats) * sizeof(float)));
    Taps* row_taps = taps;
    Taps* col_taps = taps + g.h.out;
    for (int64_t o = 0; o < g.h.out; ++o) row_taps[o] = axis_taps(g.h, o);
    for (int64_t o = 0; o < g.w.out; ++o) col_taps[o] = axis_taps(g.w, o);
    const int64_t planes = x.dim(0) * x.dim(1), rows = planes * g.h.out;
    const float* xs = x.data_as<float>();
    float* ys = y.data_as<float>();
    auto run_rows = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t plane = r / g.h.out, oh = r % g.h.out;
        const Taps th = row_taps[oh];
        const float* xp = xs + plane * g.h.in * g.w.in * kBlock;
        float* yr = ys + r * g.w.out * kBlock;
        const int64_t ih0 = oh * g.h.stride - g.h.pad_begin;
        for (int64_t ow = 0; ow < g.w.out; ++ow) {
          const Taps tw = col_taps[ow];
          const int64_t iw0 = ow * g.w.stride - g.w.pad_begin;
          auto acc = Lanes::nan();
          for (int64_t kh = th.lo; kh < th.hi; ++kh) {
            const float* row = xp + (ih0 + kh * g.h.dilation) * g.w.in * kBlock;
            for (int64_t kw = tw.lo; kw < tw.hi; ++kw) acc = Lanes::max(acc, row + (iw0 + kw * g.w.dilation) * kBlock);
          }
          Lanes::store(yr + ow * kBlock, acc);
        }
      }
    };
    const int64_t work = rows * g.w.out * g.h.kernel * g.w.kernel * kBlock;
    const int parts = parts_for(ctx.pool(), work, rows);
    if (parts == 1) run_rows(0, rows);
    else parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) run_rows(rows * part / parts, rows * (part + 1) / parts);
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;  // windows without an input tap
  bool ceil_mode_ = false;
};

}  // namespace
}  // namespace ignis::kernels::x86
