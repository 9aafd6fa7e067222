// SPDX-License-Identifier: Apache-2.0
// x86 kernels of the blocked channel layout (ai.ignis BlockChannels, UnblockChannels,
// BlockedConv, BlockedGlobalAveragePool; docs/ops_ai_ignis.md), 16-channel blocks
// (conv_blocked.h), on AVX-512 and on AVX2: one kernel object each, calling its instruction
// set's functions through a BlockedKernels table.
//
// BlockedConv runs pointwise (1x1, unpadded, one group; strided ones over a copy of the
// positions they read) and depthwise (one channel per group, no dilation) convolutions
// directly on the blocked tensors, dense 3x3s at unit stride with Winograd F(4x4) (AVX-512;
// conv_blocked_winograd_avx512.cc), other dense and grouped windows with the direct kernels,
// and ungrouped undilated ones from a plain input (plain_input = 1: network stems), with
// weights packed once at creation; anything else (other geometries, a non-constant W,
// another block size) goes to the reference kernel, which unblocks, convolves and blocks
// again. In bfloat16 sessions on CPUs with AVX512_BF16 the pointwise, direct and stride-2
// plain paths run in bfloat16 (pointwise_in_bf16, direct_in_bf16). The layout pass
// (src/passes/convert_to_blocked_layout.cc) only creates BlockedConv nodes the direct paths
// take.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/conv_geometry.h"
#include "core/cpu_features.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/conv_winograd.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr DTypeSet kF32{DType::F32};

constexpr BlockedKernels kAvx512{.block = block_channels_avx512,
                                 .unblock = unblock_channels_avx512,
                                 .pointwise = blocked_pointwise_avx512,
                                 .scale_channels = blocked_scale_channels_avx512,
                                 .scale_weights = blocked_pointwise_scale_weights_avx512,
                                 .global_average_pool = blocked_global_average_pool_avx512,
                                 .depthwise = blocked_depthwise_avx512,
                                 .plain = blocked_plain_avx512,
                                 .direct = blocked_direct_avx512};
constexpr BlockedKernels kAvx2{.block = block_channels_avx2,
                               .unblock = unblock_channels_avx2,
                               .pointwise = blocked_pointwise_avx2,
                               .scale_channels = blocked_scale_channels_avx2,
                               .scale_weights = blocked_pointwise_scale_weights_avx2,
                               .global_average_pool = blocked_global_average_pool_avx2,
                               .depthwise = blocked_depthwise_avx2,
                               .plain = blocked_plain_avx2,
                               .direct = blocked_direct_avx2};

// Runs f(u0, u1) over `parts` contiguous slices of [0, units).
template <class F>
void split(ThreadPool* pool, int parts, int64_t units, F&& f) {
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) f(units * part / parts, units * (part + 1) / parts);
  });
}

// ---- BlockChannels / UnblockChannels ---------------------------------------------------------

// Images, channels and positions per channel of the NCHW side of a reorder.
struct ReorderDims {
  int64_t n = 0, c = 0, hw = 1;
};

ReorderDims nchw_dims(const Shape& s) {
  ReorderDims d{s[0], s[1], 1};
  for (int i = 2; i < s.rank(); ++i) d.hw *= s[i];
  return d;
}

class ReorderKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const BlockedKernels& isa, bool to_blocked) {
    auto k = std::make_unique<ReorderKernel>();
    k->isa_ = &isa;
    k->to_blocked_ = to_blocked;
    k->fast_ = init.attrs.get_int("block", kChannelBlock) == kChannelBlock;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", to_blocked ? "BlockChannels" : "UnblockChannels", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    if (!fast_) return reference_->run(ctx);
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    const ReorderDims d = nchw_dims(to_blocked_ ? x.shape() : y.shape());
    const int64_t units = d.n * channel_blocks(d.c);
    const int parts = parallel_parts(ctx.pool(), units * d.hw * kChannelBlock, units);
    const float* src = x.data_as<float>();
    float* dst = y.data_as<float>();
    split(ctx.pool(), parts, units, [&](int64_t u0, int64_t u1) {
      (to_blocked_ ? isa_->block : isa_->unblock)(src, d.c, d.hw, dst, u0, u1);
    });
    return Status::ok();
  }

 private:
  const BlockedKernels* isa_ = nullptr;
  bool to_blocked_ = true;
  bool fast_ = false;
  std::unique_ptr<Kernel> reference_;
};

// ---- BlockedConv -----------------------------------------------------------------------------

class BlockedConvKernel final : public Kernel {
 public:
  // The tactics of the AVX-512 kernel (KernelDef::tactics): "window" and "tile" for a 3-wide
  // window at column stride 1 or 2 that the direct path runs (dense strided, grouped or a
  // 3x3 Winograd does not take), where the plan's shapes are given.
  static std::vector<std::string_view> tactics(const KernelInit& init) {
    const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
    if (w == nullptr || w->dtype() != DType::F32 || w->rank() != 4 || w->dim(3) != 3 ||
        init.attrs.get_int("plain_input", 0) == 1 || init.attrs.get_int("block", kChannelBlock) != kChannelBlock)
      return {};
    const int64_t group = init.attrs.get_int("group", 1), m = w->dim(0), cg = w->dim(1);
    if (cg == 1 && group == m) return {};  // depthwise
    const auto g = planned_geometry(init, w->shape());
    if (!g || (g->stride[1] != 1 && g->stride[1] != 2) || !blocked_direct_supported(as_2d(*g), cg * group, m, group))
      return {};
    const bool has_scale = init.input_dtypes.size() > 4 && init.input_dtypes[4] != DType::Undefined;
    if (!has_scale && conv_winograd_feasible(as_2d(*g), cg, m, group)) return {};
    return {"window", "tile"};
  }

  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const BlockedKernels& isa) {
    auto k = std::make_unique<BlockedConvKernel>();
    k->isa_ = &isa;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", "BlockedConv", init));
    k->activation_ = fused_activation(init.attrs);
    const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
    const Tensor* b = init.constants.size() > 2 ? init.constants[2] : nullptr;
    const bool has_bias = init.input_dtypes.size() > 2 && init.input_dtypes[2] != DType::Undefined;
    if (init.attrs.get_int("block", kChannelBlock) != kChannelBlock || w == nullptr || w->dtype() != DType::F32 ||
        w->rank() != 4 || (has_bias && b == nullptr))
      return std::unique_ptr<Kernel>(std::move(k));  // reference only
    const int64_t group = init.attrs.get_int("group", 1);
    const int64_t m = w->dim(0), cg = w->dim(1), kh = w->dim(2), kw = w->dim(3);
    const float* wd = w->data_as<float>();
    // The attributes' geometry on a sample plane: whether the direct path takes every run
    // (it then drops W's data; the reference kernel could no longer run).
    const int64_t sample[2] = {64, 64};
    auto sample_geometry = make_window_geometry(init.attrs, sample, w->shape().dims().subspan(2), false);
    if (!sample_geometry) return std::unique_ptr<Kernel>(std::move(k));
    const bool plain = init.attrs.get_int("plain_input", 0) == 1;
    const bool has_scale = init.input_dtypes.size() > 4 && init.input_dtypes[4] != DType::Undefined;
    if (plain) {
      if (group != 1 || cg * kh * kw > kBlockedPlainMaxTaps || !blocked_plain_supported(as_2d(*sample_geometry)))
        return std::unique_ptr<Kernel>(std::move(k));
      k->kind_ = Kind::Plain;
      // At column stride 2 in bfloat16 (resnet's 7x7 stem: 147 taps as 84 slots).
      k->bf16_ =
          &isa == &kAvx512 && !has_scale && sample_geometry->stride[1] == 2 && direct_in_bf16(init, cg * kh * kw);
      const auto floats = k->bf16_ ? blocked_plain_bf16_packed_floats : blocked_plain_packed_floats;
      const auto pack = k->bf16_ ? blocked_plain_bf16_pack : blocked_plain_pack;
      k->packed_ = aligned_floats(floats(m, cg, kh, kw), k->packed_buf_);
      pack(wd, m, cg, kh, kw, k->packed_);
    } else if (group == 1 && kh == 1 && kw == 1 &&
               (sample_geometry->is_pointwise() ||
                (never_padded(init.attrs, *sample_geometry) &&
                 ((&isa == &kAvx512 && pointwise_in_bf16(init, cg)) || narrow_output(init, w->shape()))))) {
      k->kind_ = Kind::Pointwise;
      k->subsample_ = !sample_geometry->is_pointwise();
      k->bf16_ = &isa == &kAvx512 && pointwise_in_bf16(init, cg);
      if (k->bf16_) {
        k->packed_ = aligned_floats(blocked_pointwise_bf16_packed_floats(m, cg), k->packed_buf_);
        blocked_pointwise_bf16_pack(wd, m, cg, k->packed_);
      } else {
        k->packed_ = aligned_floats(blocked_pointwise_packed_floats(m, cg), k->packed_buf_);
        blocked_pointwise_pack(wd, m, cg, k->packed_);
      }
    } else if (cg == 1 && group == m && blocked_depthwise_supported(as_2d(*sample_geometry))) {
      k->kind_ = Kind::Depthwise;
      k->packed_ = aligned_floats(blocked_depthwise_packed_floats(m, kh, kw), k->packed_buf_);
      blocked_depthwise_pack(wd, m, kh, kw, k->packed_);
    } else if (&isa == &kAvx512 && !has_scale && conv_winograd_feasible(as_2d(*sample_geometry), cg, m, group) &&
               !(direct_in_bf16(init, cg * kh * kw) && few_winograd_tiles(init, w->shape()))) {
      k->kind_ = Kind::Winograd;
      k->winograd_ = winograd4_weights_transposed(wd, m, cg, channel_blocks(cg) * kChannelBlock,
                                                  channel_blocks(m) * kChannelBlock, gemm_backend_avx512());
    } else if (blocked_direct_supported(as_2d(*sample_geometry), cg * group, m, group)) {
      k->kind_ = Kind::Direct;
      k->window_rows_ = window_rows(init, w->shape());
      k->direct_c_ = cg * group;
      k->direct_group_ = group;
      k->bf16_ = &isa == &kAvx512 && !has_scale && direct_in_bf16(init, cg * kh * kw);
      const float* pack_w = wd;
      int64_t pack_cg = cg;
      std::vector<float> dense;
      if (blocked_sub_block_groups(cg * group, m, group)) {
        // As groups of one block (the last one's padded lanes zero) with zero weights outside
        // each output channel's group.
        dense.resize(static_cast<size_t>(m * kChannelBlock * kh * kw));
        blocked_densify_sub_block_groups(wd, m, cg, kh, kw, dense.data());
        k->direct_group_ = channel_blocks(m);
        k->direct_c_ = k->direct_group_ * kChannelBlock;
        pack_w = dense.data();
        pack_cg = kChannelBlock;
      }
      const auto floats = k->bf16_ ? blocked_direct_bf16_packed_floats : blocked_plain_packed_floats;
      const auto pack = k->bf16_ ? blocked_direct_bf16_pack : blocked_plain_pack;
      k->packed_ = aligned_floats(floats(m, pack_cg, kh, kw), k->packed_buf_);
      pack(pack_w, m, pack_cg, kh, kw, k->packed_);
    } else {
      return std::unique_ptr<Kernel>(std::move(k));
    }
    // The bias padded to whole output blocks (zero past m), so tiles load it as vectors; the
    // pointwise tiles read whole pairs of blocks.
    const size_t padded = static_cast<size_t>((channel_blocks(m) + 1) / 2 * 2 * kChannelBlock);
    k->bias_ = aligned_floats(padded, k->bias_buf_);
    std::fill_n(k->bias_, padded, 0.0f);
    if (b != nullptr) std::copy_n(b->data_as<float>(), m, k->bias_);
    if (init.input_shapes.size() > 1 && init.input_shapes[1].rank() == 4)
      if (const auto wg = planned_geometry(init, init.input_shapes[1])) k->plan_geometry_ = *wg;
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // The direct paths read the packed W and the padded bias only.
  bool uses_constant_data(int input) const override { return kind_ == Kind::None || (input != 1 && input != 2); }

  Status run(KernelContext& ctx) const override {
    if (kind_ == Kind::None) return reference_->run(ctx);
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    const auto x_spatial = x.shape().dims().subspan(2, 2), w_spatial = w.shape().dims().subspan(2);
    WindowGeometry wg = plan_geometry_;
    if (!same_spatial(wg, x_spatial, w_spatial)) {
      IGNIS_ASSIGN_OR_RETURN(wg, make_window_geometry(ctx.attrs(), x_spatial, w_spatial, false));
    }
    const ConvGeometry2d g = as_2d(wg);
    BlockedConvArgs a;
    a.x = x.data_as<float>();
    a.w = packed_;
    a.bias = bias_;
    a.residual = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    a.y = y.data_as<float>();
    a.c = w.dim(1) * ctx.attrs().get_int("group", 1);
    a.m = w.dim(0);
    a.group = ctx.attrs().get_int("group", 1);
    a.act = &activation_;
    const int64_t n = x.dim(0);
    if (!ctx.has_input(4)) {
      run_images(ctx, g, a, n, nullptr);
      return Status::ok();
    }
    // X * S, one image at a time: S scales the image's input blocks, or, where that is less
    // work (pointwise layers with more positions than output channels), the packed weights.
    const float* scale = ctx.input(4).data_as<float>();
    const int64_t cb = channel_blocks(a.c), pairs = (channel_blocks(a.m) + 1) / 2;
    const int64_t in_positions = g.ih * g.iw, out_image = channel_blocks(a.m) * kChannelBlock * g.oh * g.ow;
    const int64_t x_floats = cb * kChannelBlock * in_positions;
    const int64_t w_floats = static_cast<int64_t>(blocked_pointwise_packed_floats(a.m, a.c));
    const bool scale_w = kind_ == Kind::Pointwise && w_floats < x_floats;
    // One scratch buffer (a second request would reuse it): the scaled operand, then the
    // direct path's padded input of one image.
    const int64_t scaled_floats = ((scale_w ? w_floats : x_floats) + 15) / 16 * 16;
    float* scaled = static_cast<float*>(
        ctx.scratch(static_cast<size_t>(scaled_floats + padded_floats(g, a.c, 1)) * sizeof(float)));
    for (int64_t i = 0; i < n; ++i) {
      BlockedConvArgs b = a;
      b.x += i * x_floats;
      b.y += i * out_image;
      if (b.residual) b.residual += i * out_image;
      const float* s = scale + i * a.c;
      if (scale_w) {
        split(ctx.pool(), parallel_parts(ctx.pool(), w_floats, pairs), pairs, [&](int64_t j0, int64_t j1) {
          isa_->scale_weights(packed_, s, a.c, scaled, j0, j1);
        });
        b.w = scaled;
      } else {
        split(ctx.pool(), parallel_parts(ctx.pool(), x_floats, cb), cb, [&](int64_t b0, int64_t b1) {
          isa_->scale_channels(b.x, s, a.c, in_positions, scaled, b0, b1);
        });
        b.x = scaled;
      }
      run_images(ctx, g, b, 1, scaled + scaled_floats);
    }
    return Status::ok();
  }

 private:
  enum class Kind { None, Pointwise, Depthwise, Plain, Direct, Winograd };

  // Whether a pointwise BlockedConv over c input channels runs in bfloat16: in bfloat16
  // sessions on CPUs with AVX512_BF16, as the NCHW convolutions do (nn_conv.cc, conv_backend:
  // not under 32 input channels), without S (whose scaling of the packed weights is float32)
  // and within the tile buffer's channels.
  static bool pointwise_in_bf16(const KernelInit& init, int64_t c) {
    const bool has_scale = init.input_dtypes.size() > 4 && init.input_dtypes[4] != DType::Undefined;
    return direct_in_bf16(init, c) && !has_scale && channel_blocks(c) <= kBlockedPointwiseBf16MaxBlocks;
  }
  // Whether a 1x1 convolution's windows never reach padding at any input size (explicit pads
  // of zero or VALID): with strides above 1, its inputs are a subsample of X's positions.
  static bool never_padded(const AttrMap& attrs, const WindowGeometry& sample) {
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
    for (int i = 0; i < sample.rank; ++i)
      if (sample.pad_begin[i] != 0 || sample.pad_end[i] != 0 || sample.dilation[i] != 1) return false;
    return true;
  }

  // Output columns that fill two of the direct kernel's 12-position tiles.
  static constexpr int64_t kTileColumns = 24;

  // The geometry in the plan's shapes (blocked X [N, C / 16, H, W, 16] at input 0) for
  // weights of `w_shape`; nullopt when they are not given or do not make one.
  static std::optional<WindowGeometry> planned_geometry(const KernelInit& init, const Shape& w_shape) {
    if (init.input_shapes.empty() || init.input_shapes[0].rank() < 4) return std::nullopt;
    auto g = make_window_geometry(init.attrs, init.input_shapes[0].dims().subspan(2, 2), w_shape.dims().subspan(2),
                                  false);
    if (!g) return std::nullopt;
    return *g;
  }

  // Whether the planned output of a Winograd-feasible 3x3 has fewer 4x4 tiles than pay for
  // the float32 Winograd in a bfloat16 session, where the direct kernel runs in bfloat16
  // instead. resnet50 in bf16, 2 threads, Zen 4, per-layer minima: at 14x14 (16 tiles, 256
  // channels) Winograd 740-780 us, bf16 direct 547-564; at 28x28 (49 tiles, 128 channels)
  // Winograd 375-410, direct 545-562; at 56x56 about level. Unknown shapes take Winograd.
  static bool few_winograd_tiles(const KernelInit& init, const Shape& w_shape) {
    constexpr int64_t kMinTiles = 36;
    const auto g = planned_geometry(init, w_shape);
    if (!g || g->out[0] <= 0 || g->out[1] <= 0) return false;
    return blocked_winograd4_tiles(as_2d(*g)) < kMinTiles;
  }

  // Whether the planned output rows of a strided 1x1 are narrower than two of the direct
  // kernel's 12-position tiles (or not known): those run as pointwise tiles over a copy of
  // the positions they read. The direct kernel reads wider ones in place, without the copy
  // (regnet_x_800mf, 2 threads, Zen 4: its 112 -> 56 and 56 -> 28 projections 107 and 94 us
  // direct, 148 and 142 over the copy; to 14x14 and 7x7, 133 and 136 over the copy against
  // 215 and 248 in the NCHW GEMM between two reorders).
  static bool narrow_output(const KernelInit& init, const Shape& w_shape) {
    const auto g = planned_geometry(init, w_shape);
    return !g || g->out[1] < kTileColumns;
  }

  // Whether the direct path runs 3-wide windows input-stationary (BlockedConvArgs::
  // window_rows): as a named tactic says, else by the rules. On Ice Lake the window ran
  // regnet_x_800mf's grouped 3x3s 2-2.8x faster than the tile at every width; on Zen 4 the
  // tile is ahead where output rows fill two of its 12-position tiles (1 thread, per node,
  // window / tile: 112 -> 56 815 / 720 us, 28x28 366 / 326 and 300 / 285) and behind on
  // narrower ones (14x14 185 / 218, 7x7 120 / 224).
  static bool window_rows(const KernelInit& init, const Shape& w_shape) {
    if (init.tactic == "window") return true;
    if (init.tactic == "tile") return false;
    static const bool zen4 = cpu_features().microarchitecture() == "zen4";
    if (!zen4) return true;
    const auto g = planned_geometry(init, w_shape);
    return !g || g->out[1] < kTileColumns;
  }

  // Whether a direct BlockedConv of `products` multiply-adds per output runs in bfloat16: in
  // bfloat16 sessions on CPUs with AVX512_BF16, from 32 products per output as the NCHW
  // convolutions (a narrow window over few channels stays float32).
  static bool direct_in_bf16(const KernelInit& init, int64_t products) {
    constexpr int64_t kMinDepth = 32;
    return &gemm_backend_for(init.precision) == &gemm_backend_avx512bf16() && products >= kMinDepth;
  }

  // Floats of the direct path's padded input (in bfloat16, pairs of channels: half as many),
  // or of a strided pointwise's copy of the positions it reads, for n images (0 on the other
  // paths).
  int64_t padded_floats(const ConvGeometry2d& g, int64_t c, int64_t n) const {
    if (kind_ == Kind::Pointwise && subsample_) return n * channel_blocks(c) * g.oh * g.ow * kChannelBlock;
    if (kind_ != Kind::Direct) return 0;
    const int64_t per_position = bf16_ ? kChannelBlock / 2 : kChannelBlock;
    return n * channel_blocks(c) * blocked_padded_rows(g) * blocked_padded_cols(g) * per_position;
  }
  // pad_buf: room for padded_floats(g, a.c, n), or null to take it from ctx's scratch.
  void run_images(KernelContext& ctx, const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t n,
                  float* pad_buf) const {
    if (kind_ == Kind::Pointwise && subsample_) {
      // A strided 1x1: the positions it reads copied together, then the pointwise tiles over
      // them (the direct kernel's tiles run an output row of 7 as 4 + 1 + 1 + 1 positions,
      // streaming the weights once per tile: resnet50's 1024 -> 2048 stride-2 projection to
      // 7x7 took 1.27 ms there in bfloat16 against 0.84 in the NCHW GEMM).
      const int64_t units = n * channel_blocks(a.c), plane = g.oh * g.ow * kChannelBlock;
      float* sub = pad_buf != nullptr
                       ? pad_buf
                       : static_cast<float*>(ctx.scratch(static_cast<size_t>(units * plane) * sizeof(float)));
      split(ctx.pool(), parallel_parts(ctx.pool(), units * plane, units), units,
            [&](int64_t u0, int64_t u1) { blocked_subsample_planes(g, a.x, sub, u0, u1); });
      BlockedConvArgs b = a;
      b.x = sub;
      run_pointwise(ctx, b, n, g.oh * g.ow, bf16_ ? blocked_pointwise_avx512bf16 : isa_->pointwise);
      return;
    }
    if (kind_ == Kind::Pointwise) {
      run_pointwise(ctx, a, n, g.ih * g.iw, bf16_ ? blocked_pointwise_avx512bf16 : isa_->pointwise);
      return;
    }
    if (kind_ == Kind::Plain) {
      const int64_t rows = n * g.oh;
      const int parts = parallel_parts(ctx.pool(), rows * g.ow * a.m * a.c * g.kh * g.kw, rows);
      if (!bf16_) {
        split(ctx.pool(), parts, rows, [&](int64_t r0, int64_t r1) { isa_->plain(g, a, r0, r1); });
        return;
      }
      // The image padded and rounded to bfloat16 first.
      const int64_t planes = n * a.c;
      auto* padded = static_cast<uint32_t*>(ctx.scratch(blocked_plain_bf16_padded_floats(g, planes) * sizeof(float)));
      split(ctx.pool(), parallel_parts(ctx.pool(), planes * g.ih * g.iw, planes), planes,
            [&](int64_t u0, int64_t u1) { blocked_plain_bf16_pad(g, a.x, padded, u0, u1); });
      BlockedConvArgs b = a;
      b.x = reinterpret_cast<const float*>(padded);
      split(ctx.pool(), parts, rows, [&](int64_t r0, int64_t r1) { blocked_plain_avx512bf16(g, b, r0, r1); });
      return;
    }
    if (kind_ == Kind::Winograd) {
      // One contiguous range of output tiles per thread (at least 8 tiles each, the GEMM
      // tile's rows), each with its own buffers. A 14x14 image's 16 tiles then run on two
      // threads: densenet's 3x3s there (128 -> 32 channels), 2 threads, 115 -> 80 us each.
      ThreadPool* pool = ctx.pool();
      const int64_t total = n * blocked_winograd4_tiles(g);
      const int parts = static_cast<int>(std::clamp<int64_t>(total / 8, 1, pool ? pool->threads() : 1));
      const size_t per_part = (blocked_winograd4_scratch_floats(a.c, a.m, (total + parts - 1) / parts) + 15) / 16 * 16;
      float* scratch = static_cast<float*>(ctx.scratch(per_part * static_cast<size_t>(parts) * sizeof(float)));
      parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
          blocked_winograd4_avx512(g, a, winograd_.data(), total * p / parts, total * (p + 1) / parts,
                                   scratch + per_part * static_cast<size_t>(p));
      });
      return;
    }
    if (kind_ == Kind::Direct) {
      // The input zero-padded first (a copy of each input block's plane) unless the windows
      // lie inside it as it is, then the rows.
      // In bfloat16 the copy is always made: it rounds the input to pairs.
      BlockedConvArgs b = a;
      b.x_in_place = !bf16_ && blocked_direct_in_place(g);
      if (!b.x_in_place) {
        const int64_t units = n * channel_blocks(a.c);
        const int64_t plane = blocked_padded_rows(g) * blocked_padded_cols(g) * kChannelBlock;
        float* padded = pad_buf != nullptr ? pad_buf
                                           : static_cast<float*>(ctx.scratch(
                                                 static_cast<size_t>(padded_floats(g, a.c, n)) * sizeof(float)));
        split(ctx.pool(), parallel_parts(ctx.pool(), units * plane, units), units, [&](int64_t u0, int64_t u1) {
          if (bf16_) blocked_pad_planes_bf16(g, a.x, reinterpret_cast<uint32_t*>(padded), u0, u1);
          else blocked_pad_planes(g, a.x, padded, u0, u1);
        });
        b.x = padded;
      }
      b.window_rows = window_rows_;
      b.c = direct_c_;  // groups within a block run as groups of one
      b.group = direct_group_;
      const int64_t rows = n * g.oh;
      const int parts = parallel_parts(ctx.pool(), rows * g.ow * a.m * a.c / a.group * g.kh * g.kw, rows);
      const auto direct = bf16_ ? blocked_direct_avx512bf16 : isa_->direct;
      split(ctx.pool(), parts, rows, [&](int64_t r0, int64_t r1) { direct(g, b, r0, r1); });
      return;
    }
    const int64_t rows = n * channel_blocks(a.m) * g.oh;
    const int parts = parallel_parts(ctx.pool(), rows * g.ow * kChannelBlock * g.kh * g.kw, rows);
    split(ctx.pool(), parts, rows, [&](int64_t r0, int64_t r1) { isa_->depthwise(g, a, r0, r1); });
  }

  // Threads take slices of the positions (whole 12-position tiles) when there are enough
  // tiles to balance; otherwise slices of (output block pair, image, tile) units, pair-major,
  // so that a thread's pairs' weights are read by that thread only (a 7x7 image has 5 tiles
  // and e.g. 5 pairs: pairs alone split 3 : 2 over two threads), and once for all images of a
  // batch while they stay in cache (a 7x7 layer's weights, up to megabytes, were read from L3
  // once per image).
  using PointwiseFn = void (*)(const BlockedConvArgs&, int64_t, int64_t, int64_t, int64_t, int64_t);
  static void run_pointwise(KernelContext& ctx, const BlockedConvArgs& a, int64_t n, int64_t positions,
                            PointwiseFn pointwise) {
    constexpr int64_t kTile = 12;
    const int64_t in_image = channel_blocks(a.c) * kChannelBlock * positions;
    const int64_t out_image = channel_blocks(a.m) * kChannelBlock * positions;
    const int64_t pairs = (channel_blocks(a.m) + 1) / 2;
    const int64_t tiles = (positions + kTile - 1) / kTile;
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->threads() : 1;
    const bool by_positions = tiles >= 8 * threads;
    const int64_t units = by_positions ? n * tiles : pairs * n * tiles;
    const int parts = parallel_parts(pool, n * positions * a.c * a.m, units);
    auto image_args = [&](int64_t image) {
      BlockedConvArgs b = a;
      b.x += image * in_image;
      b.y += image * out_image;
      if (b.residual) b.residual += image * out_image;
      return b;
    };
    split(pool, parts, units, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1;) {
        if (by_positions) {  // tiles [first, last) of one image, every pair
          const int64_t image = u / tiles, first = u % tiles, last = std::min(tiles, first + (u1 - u));
          pointwise(image_args(image), positions, first * kTile, std::min(positions, last * kTile), 0, pairs);
          u += last - first;
        } else {  // tiles [t0, t1) of one pair and image
          const int64_t j = u / (n * tiles), image = u / tiles % n, t0 = u % tiles;
          const int64_t t1 = std::min(tiles, t0 + (u1 - u));
          pointwise(image_args(image), positions, t0 * kTile, std::min(positions, t1 * kTile), j, j + 1);
          u += t1 - t0;
        }
      }
    });
  }

  static float* aligned_floats(size_t n, std::shared_ptr<void>& owner) {
    owner = make_aligned_buffer(n * sizeof(float));
    return static_cast<float*>(owner.get());
  }

  const BlockedKernels* isa_ = nullptr;
  Kind kind_ = Kind::None;
  bool bf16_ = false;  // pointwise, direct or plain in bfloat16 (packed_ holds bfloat16 pairs)
  bool window_rows_ = true;  // the direct path's 3-wide windows input-stationary (window_rows)
  bool subsample_ = false;  // a strided pointwise: its positions copied together first
  // The direct path's input channels and groups (whole blocks: c rounded up to 16, one group
  // per block, for groups of half a block).
  int64_t direct_c_ = 0, direct_group_ = 1;
  std::unique_ptr<Kernel> reference_;
  std::shared_ptr<void> packed_buf_, bias_buf_;
  float* packed_ = nullptr;  // W packed for the direct path
  std::vector<PackedMatrix> winograd_;  // the Winograd path's 36 U_k^T
  float* bias_ = nullptr;    // B padded to whole pairs of output blocks
  WindowGeometry plan_geometry_;
  GemmEpilogue activation_;
};

// ---- BlockedGlobalAveragePool ----------------------------------------------------------------

template <const BlockedKernels& Isa>
Status blocked_global_average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dim(4) != kChannelBlock) {  // other block sizes: the reference kernel
    static const KernelDef* const ref =
        KernelRegistry::global().reference("ai.ignis", "BlockedGlobalAveragePool", 1, DType::F32);
    if (ref == nullptr || ref->fn == nullptr) return internal_error("no reference BlockedGlobalAveragePool kernel");
    return ref->fn(ctx);
  }
  const int64_t c = ctx.attrs().get_int("channels", 1), positions = x.dim(2) * x.dim(3);
  const int64_t units = x.dim(0) * x.dim(1);
  const float* src = x.data_as<float>();
  float* y = ctx.output(0).data_as<float>();
  split(ctx.pool(), parallel_parts(ctx.pool(), units * positions * kChannelBlock, units), units,
        [&](int64_t u0, int64_t u1) { Isa.global_average_pool(src, c, positions, y, u0, u1); });
  return Status::ok();
}

template <const BlockedKernels& Isa>
Result<std::unique_ptr<Kernel>> create_block_channels(const KernelInit& init) {
  return ReorderKernel::create(init, Isa, true);
}
template <const BlockedKernels& Isa>
Result<std::unique_ptr<Kernel>> create_unblock_channels(const KernelInit& init) {
  return ReorderKernel::create(init, Isa, false);
}
template <const BlockedKernels& Isa>
Result<std::unique_ptr<Kernel>> create_blocked_conv(const KernelInit& init) {
  return BlockedConvKernel::create(init, Isa);
}

}  // namespace

void register_nn_conv_blocked(KernelRegistry& r) {
  // AVX2 (priority 10) below AVX-512 (20): the same layout and sums, half the vector width.
  r.add({.domain = "ai.ignis", .op_type = "BlockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/blockchannels_f32_avx512",
         .factory = create_block_channels<kAvx512>});
  r.add({.domain = "ai.ignis", .op_type = "BlockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/blockchannels_f32_avx2", .factory = create_block_channels<kAvx2>});
  r.add({.domain = "ai.ignis", .op_type = "UnblockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/unblockchannels_f32_avx512",
         .factory = create_unblock_channels<kAvx512>});
  r.add({.domain = "ai.ignis", .op_type = "UnblockChannels", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/unblockchannels_f32_avx2",
         .factory = create_unblock_channels<kAvx2>});
  r.add({.domain = "ai.ignis", .op_type = "BlockedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/blockedconv_f32_avx512",
         .factory = create_blocked_conv<kAvx512>, .tactics = BlockedConvKernel::tactics});
  r.add({.domain = "ai.ignis", .op_type = "BlockedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/blockedconv_f32_avx2", .factory = create_blocked_conv<kAvx2>});
  r.add({.domain = "ai.ignis", .op_type = "BlockedGlobalAveragePool", .since_opset = 1, .until_opset = 1,
         .types = kF32, .isa = Isa::Avx512, .priority = 20, .id = "x86/blockedglobalaveragepool_f32_avx512",
         .fn = blocked_global_average_pool<kAvx512>});
  r.add({.domain = "ai.ignis", .op_type = "BlockedGlobalAveragePool", .since_opset = 1, .until_opset = 1,
         .types = kF32, .isa = Isa::Avx2, .priority = 10, .id = "x86/blockedglobalaveragepool_f32_avx2",
         .fn = blocked_global_average_pool<kAvx2>});
}

}  // namespace ignis::kernels::x86
