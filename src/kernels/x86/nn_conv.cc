// SPDX-License-Identifier: Apache-2.0
// x86 Conv (float32, 1-D and 2-D) on the sgemm (one registration per GEMM backend, AVX2 4x24
// and AVX-512 8x32) and the direct depthwise kernels (AVX2, and AVX-512 on the 8x32 backend).
// In sessions of precision bf16 on CPUs with AVX512_BF16 the AVX-512 registration runs its
// GEMMs (plain and transposed) on the bfloat16 8x32 backend (gemm_backend_for; conv_backend
// says which convolutions stay float32); Winograd and the depthwise kernels stay float32.
//
// Per image and group, Y_g [Mg x OH*OW] = W_g [Mg x Cg*KH*KW] * im2col(X_g). W_g is the GEMM
// A operand, packed once at creation when W is constant; the B operand is X_g itself for
// 1x1 unit-stride unpadded convolutions and otherwise an im2col block the packer writes
// straight from the image (conv_avx2.cc), so no im2col matrix is ever materialized. The
// bias is the GEMM epilogue's per-row bias. Depthwise convolutions (one input channel per
// group) run the direct kernel of the backend's ISA, channel planes split over the threads.
// Everything else (3-D and wider convolutions, depthwise with dilation or strides above 2)
// goes to the reference kernel.
// ai.ignis FusedConv, act(Conv(X, W, B) + Z), is the same kernel with the residual Z and
// the activation applied as each output tile is stored.
#include <algorithm>
#include <string>
#include <vector>

#include "core/conv_geometry.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/conv_depthwise_avx512.h"
#include "kernels/x86/conv_transposed.h"
#include "kernels/x86/conv_winograd.h"
#include "kernels/x86/gemm.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr DTypeSet kF32{DType::F32};

}  // namespace

// Cost model: multiply-adds over tile fill, plus, for the transposed form, its store pass
// (transpose with bias, residual and activation) at about 40 multiply-adds per output value,
// measured on 196 positions x 1024 channels (70 us against 0.65 ms for the 256-deep GEMM at
// one thread; rows of 196 floats make most 16-float stores split a cache line). The plain
// form puts channels in the tile's 8 rows and positions in its 32 columns, the transposed
// form the other way round. Measured per layer in resnet50 (2 threads, profile medians), plain
// -> transposed: 7x7 stage 1x1 2048->512 677 -> 573 us, 3x3 512->512 1649 -> 1503 us, 1x1
// 512->2048 656 -> 564 us; 14x14 stage 1x1 1024->256 481 -> 438 us, 3x3 256->256 unchanged,
// 1x1 256->1024 447 -> 475 us (the store pass outweighs the better fill: left plain here).
// Only up to 256 positions, the range measured. Up to 4 positions (squeeze-excitation
// convolutions of 1x1 images) the plain form runs the GEMM's narrow path, which streams W
// once and wastes no multiply-adds.
// On the AVX2 4x24 tile only up to 64 positions: there the im2col^T rows are packed 8 at a
// time and split into 4-row panels (conv_f32_pack_im2col_rows), a cost the model leaves out.
// Measured with `ignis tune models/resnet50.onnx -t 1 -v` on an AMD EPYC family 25 model 1
// (Zen 3), plain -> transposed: 7x7 stage 1x1 512->2048 1617 -> 1229 us, 3x3 512->512
// 3791 -> 3150 us, 1x1 2048->512 1611 -> 1232 us, 1x1/2 1024->2048 3384 -> 2742 us; 14x14
// stage 3x3 256->256 3044 -> 3530 us (the model predicted a 5% win), 1x1 within 5% either way.
bool conv_transposed_wins(int64_t positions, int64_t channels, int64_t depth, const GemmBackend& be) {
  constexpr int64_t kNarrowPositions = 4, kMaxPositions = 256, kMaxPositions4Rows = 64;
  constexpr double kStoreCost = 40.0;
  if (positions <= kNarrowPositions || positions > (be.mr % 8 == 0 ? kMaxPositions : kMaxPositions4Rows)) return false;
  auto fill = [](int64_t v, int64_t tile) {
    return static_cast<double>(v) / static_cast<double>((v + tile - 1) / tile * tile);
  };
  const double d = static_cast<double>(depth);
  const double plain = d / (fill(positions, be.nr) * fill(channels, be.mr));
  const double transposed = d / (fill(positions, be.mr) * fill(channels, be.nr)) + kStoreCost;
  return transposed < plain;
}

namespace {

// Output tiles per image from which the rules run a convolution in Winograd F(4x4)
// (conv_winograd.h).
int64_t winograd_min_tiles(const GemmBackend& backend) {
  return backend.isa == Isa::Avx512 ? kConvWinogradMinTiles : kConvWinogradMinTilesAvx2;
}

// A tactic name of conv_tactics without its "_bf16" suffix: the algorithm it names (the
// backend follows from the session's precision).
std::string gemm_tactic(std::string_view tactic) {
  constexpr std::string_view kSuffix = "_bf16";
  if (tactic.ends_with(kSuffix)) tactic.remove_suffix(kSuffix.size());
  return std::string(tactic);
}

class ConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, bool fused, const GemmBackend& backend) {
    auto k = std::make_unique<ConvKernel>();
    k->backend_ = &backend;
    k->fused_ = fused;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, fused ? make_reference_kernel("ai.ignis", "FusedConv", init)
                                                : make_reference_kernel("", "Conv", init));
    if (fused) k->activation_ = fused_activation(init.attrs);
    const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
    const int64_t group = init.attrs.get_int("group", 1);
    const bool f32_weights = w && w->dtype() == DType::F32 && (w->rank() == 3 || w->rank() == 4);
    const int64_t kdim = f32_weights ? w->numel() / std::max<int64_t>(w->dim(0), 1) : 0;  // Cg * KH * KW
    // The bfloat16 backend is an AVX-512 one: every AVX-512 algorithm stays available with it.
    const bool avx512 = backend.isa == Isa::Avx512;
    const bool bf16 = &backend == &gemm_backend_avx512bf16();
    // The geometry in the plan's shapes, when they are given: it picks the weight layouts below.
    k->plan_geometry_ = plan_window_geometry(init, 1);
    const WindowGeometry* plan_wg = k->plan_geometry_.rank > 0 ? &k->plan_geometry_ : nullptr;
    const bool plan_fits_w = plan_wg && f32_weights && init.input_shapes[1] == w->shape();
    // Images per run in the plan's shapes (1 when the batch is not known): F(2x2) counts the
    // tiles of the whole batch.
    const int64_t plan_batch = plan_wg && init.input_shapes[0].dims()[0] > 0 ? init.input_shapes[0].dims()[0] : 1;
    // Winograd F(4x4, 3x3) for unit-stride 3x3 convolutions (conv_winograd.h says where it
    // wins); runs whose geometry does not qualify use the GEMM.
    auto all_ones = [&](const char* name) {
      const std::vector<int64_t> v = init.attrs.get_ints(name);
      return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
    };
    // A named tactic (conv_tactics) replaces the rules below with the one algorithm it names.
    k->tactic_ = gemm_tactic(init.tactic);
    const bool rules = init.tactic.empty();
    if (f32_weights && w->rank() == 4 && (rules || init.tactic == "winograd4") &&
        conv_winograd_weights_supported(w->dim(2), w->dim(3), w->dim(1), w->dim(0), group) && all_ones("strides") &&
        all_ones("dilations"))
      k->winograd_ = ConvWinograd::create(w->data_as<float>(), w->dim(0), w->dim(1), backend);
    // In bfloat16 sessions the rules keep Winograd (float32) where it applies: measured with
    // `ignis tune --precision bf16` on resnet50 (2 threads), F(4x4) took 809 us against the
    // bfloat16 GEMM's 1015 at 56x56x64 and 716 against 840 at 28x28x128; at 14x14x256 the
    // rules' F(2x2) and the bfloat16 GEMM were even (404, 423).
    // F(2x2, 3x3) only where the plan's shapes say it will run (its weights are not small).
    if (avx512 && plan_fits_w && w->rank() == 4 &&
        (rules ? conv_winograd2_supported(as_2d(*plan_wg), w->dim(1), w->dim(0), group, plan_batch)
               : init.tactic == "winograd2" && conv_winograd2_feasible(as_2d(*plan_wg), w->dim(1), w->dim(0), group)))
      k->winograd2_ = ConvWinograd2::create(w->data_as<float>(), w->dim(0), w->dim(1));
    // Ungrouped convolutions whose output (in the plan's shapes) has few positions, and that
    // Winograd does not take, pack W^T for the transposed
    // formulation (conv_transposed.h) instead of W.
    if (plan_fits_w && group == 1 && plan_wg->out_numel() > 0) {
      const bool winograd =
          !k->winograd_.empty() && conv_winograd_supported(as_2d(*plan_wg), w->dim(1), w->dim(0), 1,
                                                           winograd_min_tiles(backend));
      // vdpbf16ps does two depth steps per instruction: the cost model's depth halves.
      const int64_t depth = bf16 ? (kdim + 1) / 2 : kdim;
      if (rules ? !winograd && conv_transposed_wins(plan_wg->out_numel(), w->dim(0), depth, backend)
                : k->tactic_ == "transposed")
        k->packed_wt_ = PackedMatrix::pack(PackedMatrix::Side::B, kdim, w->dim(0), w->data_as<float>(), kdim, true,
                                           backend);
    }
    // Otherwise prepack W per group for the GEMM path (1-D and 2-D, not depthwise).
    if (k->packed_wt_.empty() && f32_weights && group >= 1 && w->dim(0) % group == 0 &&
        !(w->dim(1) == 1 && group > 1)) {
      const int64_t mg = w->dim(0) / group;
      for (int64_t g = 0; g < group; ++g)
        k->packed_w_.push_back(
            PackedMatrix::pack(PackedMatrix::Side::A, mg, kdim, w->data_as<float>() + g * mg * kdim, kdim, false, backend));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // W is packed only for the GEMM path, which then never reads W's data; the depthwise and
  // reference paths read it directly.
  bool uses_constant_data(int input) const override { return input != 1 || (packed_w_.empty() && packed_wt_.empty()); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (x.rank() != 3 && x.rank() != 4) return reference_->run(ctx);
    if (y.numel() == 0) return Status::ok();
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg, run_window_geometry(plan_geometry_, ctx.attrs(),
                                                                         x.shape().dims().subspan(2),
                                                                         w.shape().dims().subspan(2)));
    const ConvGeometry2d g = as_2d(wg);
    ConvDims s;
    s.n = x.dim(0);
    s.c = x.dim(1);
    s.m = w.dim(0);
    s.group = ctx.attrs().get_int("group", 1);
    s.cg = w.dim(1);
    s.mg = s.m / s.group;
    const float* bias = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
    const float* residual = fused_ && ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    if (s.cg == 1 && s.group > 1) {
      if (!conv_f32_depthwise_supported(g)) return reference_->run(ctx);
      run_depthwise(ctx, s, g, x.data_as<float>(), w.data_as<float>(), bias, residual, y.data_as<float>());
      return Status::ok();
    }
    // A run the named tactic can compute takes it; otherwise the rules choose.
    if (!winograd_.empty() && (tactic_ == "winograd4" ? conv_winograd_feasible(g, s.cg, s.m, s.group)
                                                      : conv_winograd_supported(g, s.cg, s.m, s.group,
                                                                                winograd_min_tiles(*backend_)))) {
      run_winograd(ctx, winograd_, g, s.n, x.data_as<float>(), bias, residual, y.data_as<float>());
      return Status::ok();
    }
    if (!winograd2_.empty() && (tactic_ == "winograd2" ? conv_winograd2_feasible(g, s.cg, s.m, s.group)
                                                       : conv_winograd2_supported(g, s.cg, s.m, s.group, s.n))) {
      run_winograd(ctx, winograd2_, g, s.n, x.data_as<float>(), bias, residual, y.data_as<float>());
      return Status::ok();
    }
    if (!packed_wt_.empty() && s.group == 1) {
      run_transposed(ctx, s, g, wg.is_pointwise(), x.data_as<float>(), bias, residual, y.data_as<float>());
      return Status::ok();
    }
    run_gemm(ctx, s, g, wg.is_pointwise(), x.data_as<float>(), w.data_as<float>(), bias, residual,
             y.data_as<float>());
    return Status::ok();
  }

 private:
  struct ConvDims {
    int64_t n = 0, c = 0, m = 0, group = 1, cg = 0, mg = 0;
  };

  void run_gemm(KernelContext& ctx, const ConvDims& s, const ConvGeometry2d& g, bool pointwise, const float* x,
                const float* w, const float* bias, const float* residual, float* y) const {
    const int64_t kdim = s.cg * g.kh * g.kw, in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
    GemmArgs shape;
    shape.backend = backend_;
    shape.m = s.mg;
    shape.n = out_plane;
    shape.k = kdim;
    shape.ldc = out_plane;
    shape.a.packed = packed_w_.empty() ? nullptr : &packed_w_[0];
    shape.epilogue = activation_;
    // Every (image, group) pair is one GEMM. Spread them over the pool when there are
    // enough to balance; otherwise split each GEMM's columns.
    const int64_t tasks = s.n * s.group;
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->threads() : 1;
    const size_t per_thread = gemm_f32_thread_workspace(shape);
    float* ws = static_cast<float*>(ctx.scratch(per_thread * static_cast<size_t>(threads) * sizeof(float)));
    auto one = [&](int64_t t, ThreadPool* inner, float* mine) {
      const int64_t n = t / s.group, grp = t % s.group;
      const float* xg = x + (n * s.c + grp * s.cg) * in_plane;
      GemmArgs a = shape;
      if (!packed_w_.empty()) a.a.packed = &packed_w_[static_cast<size_t>(grp)];
      else a.a = {.data = w + grp * s.mg * kdim, .ld = kdim};
      Im2colSource src{xg, g};
      if (pointwise) {
        a.b = {.data = xg, .ld = in_plane};
      } else {
        a.b.pack_fn = conv_f32_pack_im2col;
        a.b.pack_ctx = &src;
      }
      a.c = y + (n * s.m + grp * s.mg) * out_plane;
      if (residual) {
        a.epilogue.residual = residual + (n * s.m + grp * s.mg) * out_plane;
        a.epilogue.residual_ld = out_plane;
      }
      if (bias) {
        a.epilogue.bias = bias + grp * s.mg;
        a.epilogue.bias_rs = 1;
        a.epilogue.bias_cs = 0;
      }
      if (inner) gemm_f32(a, inner, mine);
      else gemm_f32_range(a, 0, a.m, 0, a.n, mine);
    };
    const bool across = threads > 1 && tasks > 1 && (tasks % threads == 0 || tasks >= 4 * threads);
    if (!across) {
      for (int64_t t = 0; t < tasks; ++t) one(t, pool, ws);
      return;
    }
    parallel_for(pool, threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part)
        for (int64_t t = tasks * part / threads; t < tasks * (part + 1) / threads; ++t)
          one(t, nullptr, ws + per_thread * static_cast<size_t>(part));
    });
  }

  // What packing one im2col^T value costs, in the multiply-adds the tiles run meanwhile:
  // a gather of about a cycle, 32 multiply-adds on AVX-512. At 4 (a plain copy's cost) two
  // threads split the channels of resnet50's 14x14 layers, each thread packing every
  // position; splitting the positions instead took (2 threads, Ice Lake, per-layer minima of
  // 3 profiles) the 3x3/2 256 -> 256 from 1936 to 1430 us, the 1x1/2 512 -> 1024 from 1256
  // to 978, the 1x1 1024 -> 256s from ~560 to ~440 each. Unmeasured on AVX2: kept at 4 there.
  double im2col_pack_cost() const { return backend_->isa == Isa::Avx512 ? 32.0 : 4.0; }

  // ConvWinograd or ConvWinograd2 with this run's scratch and pool.
  template <class Winograd>
  void run_winograd(KernelContext& ctx, const Winograd& winograd, const ConvGeometry2d& g, int64_t batch,
                    const float* x, const float* bias, const float* residual, float* y) const {
    ThreadPool* pool = ctx.pool();
    float* ws = static_cast<float*>(
        ctx.scratch(winograd.scratch_floats(g, batch, pool ? pool->threads() : 1) * sizeof(float)));
    winograd.run(g, batch, x, bias, residual, activation_, y, pool, ws);
  }

  // C^T = im2col^T * W^T per image into scratch, then transposed into y with the epilogue
  // (conv_transposed.h). The threads split the output channels in whole 32-column panels
  // (each then packs all of the image's im2col^T rows) or the positions in whole 8-row
  // tiles, whichever costs less; either way a thread transposes the part of C^T it
  // computed, while it is still in its cache.
  void run_transposed(KernelContext& ctx, const ConvDims& s, const ConvGeometry2d& g, bool pointwise, const float* x,
                      const float* bias, const float* residual, float* y) const {
    const int64_t positions = g.oh * g.ow;
    // A padded leading dimension keeps the 16 rows one transpose reads out of one cache set.
    const int64_t ldct = (s.m + 15) / 16 * 16 + 16;
    GemmArgs shape;
    shape.backend = backend_;
    shape.m = positions;
    shape.n = s.m;
    shape.k = s.cg * g.kh * g.kw;
    shape.b.packed = &packed_wt_;
    shape.ldc = ldct;
    ThreadPool* pool = ctx.pool();
    // Images spread over the threads when they divide evenly (or are many), as run_gemm's
    // tasks: each thread runs whole images, packing each im2col^T once, with no split of a
    // small product between threads. resnet50 at batch 8 (`ignis tune --batch 8`, 2 threads,
    // Zen 5): its stride-2 convolutions into 14x14 and 7x7 took 1.1-1.3x less time so than
    // with each image split by channels, and beat the im2col GEMM.
    const int pool_threads = pool ? pool->threads() : 1;
    if (pool_threads > 1 && s.n > 1 && (s.n % pool_threads == 0 || s.n >= 4 * pool_threads)) {
      const size_t per_thread = (gemm_f32_thread_workspace(shape) + 15) / 16 * 16 + static_cast<size_t>(positions * ldct);
      float* ws = static_cast<float*>(ctx.scratch(per_thread * static_cast<size_t>(pool_threads) * sizeof(float)));
      parallel_for(pool, pool_threads, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
          float* mine = ws + per_thread * static_cast<size_t>(part);
          float* ct = mine + (gemm_f32_thread_workspace(shape) + 15) / 16 * 16;
          for (int64_t n = s.n * part / pool_threads; n < s.n * (part + 1) / pool_threads; ++n)
            transposed_image(shape, s, g, pointwise, x, bias, residual, y, n, 0, positions, 0, s.m, ct, ldct, mine);
        }
      });
      return;
    }
    const int64_t col_tiles = (s.m + backend_->nr - 1) / backend_->nr, row_tiles = (positions + backend_->mr - 1) / backend_->mr;
    // Below ~2 MFLOP per image a second thread costs about what it saves (as in gemm_f32).
    const int64_t threads = pool && 2 * shape.m * shape.n * shape.k >= (int64_t{1} << 21) ? pool->threads() : 1;
    // The cost model of gemm_f32: the slowest part's tiles, plus, when the channels are split,
    // every part packing all im2col^T rows (im2col_pack_cost multiply-adds per packed value).
    // With 96 channels (three panels) two threads split the positions: 2:1 panels lose a third.
    const int64_t parts_c = std::min(threads, col_tiles), parts_r = std::min(threads, row_tiles);
    const double k = static_cast<double>(shape.k);
    const double cost_c = static_cast<double>((col_tiles + parts_c - 1) / parts_c * backend_->nr * positions) * k +
                          im2col_pack_cost() * static_cast<double>(positions) * k;
    const double cost_r = static_cast<double>((row_tiles + parts_r - 1) / parts_r * backend_->mr * s.m) * k;
    const bool split_channels = cost_c <= cost_r;
    const int parts = static_cast<int>(split_channels ? parts_c : parts_r);
    const size_t per_thread = (gemm_f32_thread_workspace(shape) + 15) / 16 * 16;
    float* ws = static_cast<float*>(
        ctx.scratch((per_thread * static_cast<size_t>(parts) + static_cast<size_t>(positions * ldct)) * sizeof(float)));
    float* ct = ws + per_thread * static_cast<size_t>(parts);
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* mine = ws + per_thread * static_cast<size_t>(part);
        int64_t i0 = 0, i1 = positions, c0 = 0, c1 = s.m;
        if (split_channels) {
          c0 = col_tiles * part / parts * backend_->nr;
          c1 = std::min(s.m, col_tiles * (part + 1) / parts * backend_->nr);
        } else {
          i0 = row_tiles * part / parts * backend_->mr;
          i1 = std::min(positions, row_tiles * (part + 1) / parts * backend_->mr);
        }
        if (i0 >= i1 || c0 >= c1) continue;
        for (int64_t n = 0; n < s.n; ++n)
          transposed_image(shape, s, g, pointwise, x, bias, residual, y, n, i0, i1, c0, c1, ct, ldct, mine);
      }
    });
  }

  // Rows [i0, i1) x channels [c0, c1) of image n's C^T = im2col^T W^T into ct, then into y
  // with the epilogue.
  void transposed_image(const GemmArgs& shape, const ConvDims& s, const ConvGeometry2d& g, bool pointwise,
                        const float* x, const float* bias, const float* residual, float* y, int64_t n, int64_t i0,
                        int64_t i1, int64_t c0, int64_t c1, float* ct, int64_t ldct, float* workspace) const {
    const int64_t positions = g.oh * g.ow, in_plane = g.ih * g.iw;
    const float* xn = x + n * s.c * in_plane;
    const Im2colSource src{xn, g};
    GemmArgs a = shape;
    if (pointwise) a.a = {.data = xn, .ld = in_plane, .trans = true};
    else a.a = {.pack_fn = conv_f32_pack_im2col_rows, .pack_ctx = &src};
    a.c = ct;
    gemm_f32_range(a, i0, i1, c0, c1, workspace);
    GemmEpilogue e = activation_;
    e.bias = bias;
    e.residual = residual ? residual + n * s.m * positions : nullptr;
    e.residual_ld = positions;
    (backend_->isa == Isa::Avx512 ? conv_f32_store_transposed_avx512 : conv_f32_store_transposed_avx2)(
        ct, ldct, i0, i1, c0, c1, e, y + n * s.m * positions, positions);
  }

  void run_depthwise(KernelContext& ctx, const ConvDims& s, const ConvGeometry2d& g, const float* x, const float* w,
                     const float* bias, const float* residual, float* y) const {
    const int64_t planes = s.n * s.m, in_plane = g.ih * g.iw, out_plane = g.oh * g.ow, taps = g.kh * g.kw;
    // The AVX-512 backends (float32 and bfloat16) only run on CPUs with AVX-512F.
    const bool avx512 = backend_->isa == Isa::Avx512;
    const DepthwisePlanes planes_desc{.x = x, .w = w, .bias = bias, .residual = residual, .y = y, .c = s.c,
                                        .m = s.m, .mg = s.mg, .act = &activation_};
    ThreadPool* pool = ctx.pool();
    const int64_t work = planes * out_plane * taps;
    int parts = parallel_parts(pool, work, planes);
    if (conv_f32_depthwise_is_scale(g)) {
      parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part)
          conv_f32_depthwise_scale_avx2(planes_desc, out_plane, planes * part / parts, planes * (part + 1) / parts);
      });
      return;
    }
    if (avx512 ? conv_f32_depthwise_avx512_lanes(g) : conv_f32_depthwise_avx2_lanes(g)) {
      // Small planes: 16 (AVX-512) or 8 (AVX2) channels at a time (conv_depthwise_avx512.h,
      // conv_avx2.h), split over the threads by units of that many channels.
      const int64_t width = avx512 ? 16 : 8, units = s.n * ((s.m + width - 1) / width);
      const auto lanes = avx512 ? conv_f32_depthwise_lanes_avx512 : conv_f32_depthwise_lanes_avx2;
      parts = parallel_parts(pool, work, units);
      const size_t per_part =
          avx512 ? conv_f32_depthwise_avx512_lanes_scratch(g) : conv_f32_depthwise_avx2_lanes_scratch(g);
      float* scratch = static_cast<float*>(ctx.scratch(per_part * static_cast<size_t>(parts) * sizeof(float)));
      parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part)
          lanes(g, planes_desc, units * part / parts, units * (part + 1) / parts,
                scratch + per_part * static_cast<size_t>(part));
      });
      return;
    }
    const size_t per_thread = avx512 ? conv_f32_depthwise_avx512_scratch(g) : conv_f32_depthwise_scratch(g);
    float* ws = static_cast<float*>(ctx.scratch(per_thread * static_cast<size_t>(parts) * sizeof(float)));
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* mine = ws + per_thread * static_cast<size_t>(part);
        const int64_t t0 = planes * part / parts, t1 = planes * (part + 1) / parts;
        if (avx512) {
          conv_f32_depthwise_planes_avx512(g, planes_desc, t0, t1, mine);
          continue;
        }
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t n = t / s.m, m = t % s.m;
          // Output channel m of group m / mg reads input channel m / mg (C == group).
          const float* xc = x + (n * s.c + m / s.mg) * in_plane;
          conv_f32_depthwise_plane(g, xc, w + m * taps, bias ? bias[m] : 0.0f,
                                   residual ? residual + t * out_plane : nullptr, activation_, y + t * out_plane, mine);
        }
      }
    });
  }

  const GemmBackend* backend_ = nullptr;
  bool fused_ = false;                  // FusedConv: input 3 is the residual Z
  std::unique_ptr<Kernel> reference_;   // 3-D+ convolutions and unsupported depthwise shapes
  std::vector<PackedMatrix> packed_w_;  // per group, when W is constant and the GEMM path applies
  PackedMatrix packed_wt_;              // W^T as B, instead, for the transposed formulation
  ConvWinograd winograd_;               // transformed W, when W is constant and Winograd may apply
  ConvWinograd2 winograd2_;             // the same for F(2x2, 3x3), when the plan's shapes take it
  WindowGeometry plan_geometry_;        // in the plan's shapes (rank 0 when they were not given)
  std::string tactic_;                  // KernelInit::tactic less "_bf16" (see conv_tactics); empty = the rules
  GemmEpilogue activation_;             // FusedConv's activation; bias and Z are set per run
};

// The GEMM backend of a registration at the session's precision: the AVX-512 one runs in
// bfloat16 where the session asks for it and the CPU has AVX512_BF16, for constant weights
// (products of two computed inputs stay float32, as for MatMul), except for
//  - shallow convolutions, under 32 products per output (Cg * KH * KW): measured on
//    PaddleOCR's direction classifier (MobileNetV3 at width 0.35, 300 crops), with every GEMM
//    convolution in bfloat16 its probabilities moved by 0.011 on average and 3 of the 300
//    answers flipped (crops within 0.02 of even); with its shallow ones in float32 (the 3x3
//    RGB stem, depth 27, and the expansions from 8 to 24 channels) 0.003 and none. Those
//    convolutions ran 2x faster in bfloat16 (the classifier at batch 8: 3.9 ms of
//    convolutions against 4.5 with them in float32), a price paid for agreement; resnet50's
//    shallowest (its 7x7 stem) has depth 147.
//  - convolutions whose output (in the plan's shapes) has at most 4 positions, e.g. the
//    squeeze-excitation convolutions of 1x1 images: the float32 GEMM's narrow path streams W
//    once, where the bfloat16 tiles would multiply 28 padding columns of every 32.
template <const GemmBackend& (*kBackend)()>
const GemmBackend& conv_backend(const KernelInit& init) {
  constexpr int64_t kMinDepth = 32, kNarrowPositions = 4;
  if (&kBackend() != &gemm_backend_avx512()) return kBackend();
  const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
  if (!w || w->rank() < 3 || w->dim(0) <= 0 || w->numel() / w->dim(0) < kMinDepth) return kBackend();
  const WindowGeometry wg = plan_window_geometry(init, 1);
  if (wg.rank > 0 && wg.out_numel() <= kNarrowPositions) return kBackend();
  return gemm_backend_for(init.precision);
}

// The algorithms a measurement may choose between for a convolution with constant float32
// weights in the plan's shapes: the im2col GEMM always, the transposed GEMM when ungrouped,
// Winograd F(4x4) where the geometry allows it, and on the AVX-512 backend also F(2x2).
// The GEMM tactics on the bfloat16 backend are named "gemm_bf16" and "transposed_bf16", so
// that tuning reports and profiles show which products ran in bfloat16.
template <const GemmBackend& (*kBackend)()>
std::vector<std::string_view> conv_tactics(const KernelInit& init) {
  const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
  if (!w || w->dtype() != DType::F32 || w->rank() != 4 || init.input_shapes.size() < 2 ||
      !(init.input_shapes[1] == w->shape()))
    return {};
  const int64_t group = init.attrs.get_int("group", 1);
  if (w->dim(1) == 1 && group > 1) return {};  // depthwise: one direct kernel
  const WindowGeometry wg = plan_window_geometry(init, 1);
  if (wg.rank != 2 || wg.out_numel() <= 0) return {};
  const bool bf16 = &conv_backend<kBackend>(init) == &gemm_backend_avx512bf16();
  std::vector<std::string_view> t{bf16 ? "gemm_bf16" : "gemm"};
  const ConvGeometry2d g = as_2d(wg);
  if (conv_winograd_feasible(g, w->dim(1), w->dim(0), group)) t.push_back("winograd4");
  if (&kBackend() != &gemm_backend_avx512()) {
    if (group == 1) t.push_back("transposed");
    return t;
  }
  if (conv_winograd2_feasible(g, w->dim(1), w->dim(0), group)) t.push_back("winograd2");
  if (group == 1) t.push_back(bf16 ? "transposed_bf16" : "transposed");
  return t;
}

template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_conv(const KernelInit& init) {
  return ConvKernel::create(init, false, conv_backend<kBackend>(init));
}
template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_fused_conv(const KernelInit& init) {
  return ConvKernel::create(init, true, conv_backend<kBackend>(init));
}

}  // namespace

void register_nn_conv(KernelRegistry& r) {
  // Priority 10: AVX2 4x24 GEMM; 20: AVX-512 8x32, preferred where the CPU has it.
  r.add({.domain = "", .op_type = "Conv", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/conv_f32_4x24", .factory = create_conv<gemm_backend_avx2>,
         .tactics = conv_tactics<gemm_backend_avx2>});
  r.add({.domain = "ai.ignis", .op_type = "FusedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/fusedconv_f32_4x24",
         .factory = create_fused_conv<gemm_backend_avx2>, .tactics = conv_tactics<gemm_backend_avx2>});
  r.add({.domain = "", .op_type = "Conv", .since_opset = 1, .types = kF32, .isa = Isa::Avx512,
         .priority = 20, .id = "x86/conv_f32_8x32", .factory = create_conv<gemm_backend_avx512>,
         .tactics = conv_tactics<gemm_backend_avx512>});
  r.add({.domain = "ai.ignis", .op_type = "FusedConv", .since_opset = 1, .until_opset = 1, .types = kF32,
         .isa = Isa::Avx512, .priority = 20, .id = "x86/fusedconv_f32_8x32",
         .factory = create_fused_conv<gemm_backend_avx512>, .tactics = conv_tactics<gemm_backend_avx512>});
}

}  // namespace ignis::kernels::x86
