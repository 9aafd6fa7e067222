// SPDX-License-Identifier: Apache-2.0
// The x86 Pad kernel, float32, constant mode, any rank up to kMaxRank: the axes after the
// last padded one are merged into the row, so each output row is one fill-copy-fill
// (pad_norm_avx2.cc) of a contiguous input row, or a whole fill where an outer index falls in
// the padding. Negative pads (cropping) only shift and shorten the copied part. Rows are split
// over the pool in chunks of at least kRowElements elements. Reflect, edge and wrap modes and
// higher ranks go to the reference kernel. Built without ISA flags, like every registration
// file.
#include <array>
#include <cstring>

#include "kernels/x86/pad_norm_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMaxRank = 8;
// Output elements below which a chunk of rows stays on one thread.
constexpr int64_t kRowElements = int64_t{1} << 15;

class PadKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<PadKernel>();
    k->constant_ = init.attrs.get_string("mode", "constant") == "constant";
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "Pad", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const int rank = in.rank();
    if (!constant_ || rank == 0 || rank > kMaxRank) return reference_->run(ctx);
    if (out.numel() == 0) return Status::ok();
    std::array<int64_t, kMaxRank> begin{};
    float fill = 0.0f;
    if (ctx.opset() < 11) {
      const std::vector<int64_t> pads = ctx.attrs().get_ints(ctx.opset() < 2 ? "paddings" : "pads");
      for (int k = 0; k < rank; ++k) begin[k] = pads[k];
      fill = ctx.attrs().get_float("value", 0.0f);
    } else {
      const Tensor& pads = ctx.input(1);
      const int64_t n = pads.numel() / 2;
      const bool has_axes = ctx.has_input(3);
      for (int64_t i = 0; i < n; ++i) {
        int64_t a = has_axes ? int_at(ctx.input(3), i) : i;
        if (a < 0) a += rank;
        begin[a] = int_at(pads, i);
      }
      if (ctx.has_input(2)) fill = ctx.input(2).data_as<float>()[0];
    }
    // The last axis whose extent changes; the axes after it join the row.
    int last = rank - 1;
    while (last >= 0 && begin[last] == 0 && out.dim(last) == in.dim(last)) --last;
    if (last < 0) {
      std::memcpy(out.data(), in.data(), in.nbytes());
      return Status::ok();
    }
    int64_t inner = 1;
    for (int k = last + 1; k < rank; ++k) inner *= in.dim(k);
    const int64_t out_w = out.dim(last) * inner, in_w = in.dim(last) * inner;
    const int64_t shift = begin[last] * inner;
    const int64_t j0 = std::max<int64_t>(0, shift), j1 = std::min(out_w, shift + in_w);
    const int64_t count = std::max<int64_t>(0, j1 - j0);
    std::array<int64_t, kMaxRank> in_stride{};
    int64_t stride = in_w;
    for (int k = last - 1; k >= 0; --k) {
      in_stride[k] = stride;
      stride *= in.dim(k);
    }
    const int64_t rows = out.numel() / out_w;
    const float* src = in.data_as<float>();
    float* dst = out.data_as<float>();
    const int64_t grain = std::max<int64_t>(1, kRowElements / out_w);
    parallel_for(ctx.pool(), rows, grain, [&](int64_t r0, int64_t r1) {
      std::array<int64_t, kMaxRank> idx{};  // out index of row r over axes [0, last)
      for (int64_t k = last - 1, r = r0; k >= 0; --k) {
        idx[k] = r % out.dim(static_cast<int>(k));
        r /= out.dim(static_cast<int>(k));
      }
      for (int64_t r = r0; r < r1; ++r) {
        int64_t off = 0;
        bool inside = true;
        for (int k = 0; k < last; ++k) {
          const int64_t s = idx[k] - begin[k];
          inside &= s >= 0 && s < in.dim(k);
          off += s * in_stride[k];
        }
        float* row = dst + r * out_w;
        if (inside && count > 0) pad_f32_row_avx2(row, out_w, src + off + (j0 - shift), j0, count, fill);
        else pad_f32_row_avx2(row, out_w, nullptr, 0, 0, fill);
        for (int k = last - 1; k >= 0; --k) {
          if (++idx[k] < out.dim(k)) break;
          idx[k] = 0;
        }
      }
    });
    return Status::ok();
  }

 private:
  static int64_t int_at(const Tensor& t, int64_t i) {
    return t.dtype() == DType::I32 ? t.data_as<int32_t>()[i] : t.data_as<int64_t>()[i];
  }

  bool constant_ = true;
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

void register_pad(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "Pad", .since_opset = 1, .types = DTypeSet{DType::F32}, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/pad_f32_avx2", .factory = PadKernel::create});
}

}  // namespace ignis::kernels::x86
