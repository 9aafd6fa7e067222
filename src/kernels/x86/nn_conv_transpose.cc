// SPDX-License-Identifier: Apache-2.0
// x86 ConvTranspose (float32, 1-D and 2-D, any groups, strides, pads, dilations and output
// padding) on the sgemm, one registration per GEMM backend (AVX2 4x24, AVX-512 8x32).
//
// Per image and group, cols [Mg*KH*KW x positions] = W_g^T [Mg*KH*KW x Cg] * X_g [Cg x
// positions]; W_g^T is the GEMM A operand, packed once at creation when W is constant. The
// input positions are cut into chunks of whole input rows whose cols block stays around
// 256 KiB. When the stride equals the kernel and nothing is padded or dilated (the UNet/FPN
// 2x2 stride-2 upsampling), every output value is one tap of one input position: each thread
// takes whole chunks, computes a chunk's block and stores it (with the bias) into the output
// while it is still in its cache. Otherwise each chunk's GEMM is split over the threads and
// its block added into the output, filled with the bias first, by col2im split by output
// channel (taps of neighbouring positions overlap, so chunks go one after another). 3-D and wider
// convolutions go to the reference kernel.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/conv_geometry.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/conv_transpose_avx2.h"
#include "kernels/x86/gemm.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

constexpr DTypeSet kF32{DType::F32};

// Floats of one chunk's cols block (see the file comment).
constexpr int64_t kChunkFloats = int64_t{1} << 16;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Adds one output channel's taps of input rows [ih0, ih0 + rows) into its plane y: cols holds
// the channel's kh * kw GEMM rows (leading dimension ld), input (r, j) of tap (a, b) landing
// on output (ih * sh - ph + a * dh, j * sw - pw + b * dw).
void col2im_plane(const float* cols, int64_t ld, const ConvGeometry2d& g, int64_t ih0, int64_t rows, float* y) {
  for (int64_t a = 0; a < g.kh; ++a) {
    for (int64_t b = 0; b < g.kw; ++b) {
      const float* src = cols + (a * g.kw + b) * ld;
      const int64_t offset = b * g.dw - g.pw;  // output column of input column 0
      const int64_t lo = std::max<int64_t>(0, ceil_div(-offset, g.sw));
      const int64_t hi = std::min<int64_t>(g.iw, floor_div(g.ow - 1 - offset, g.sw) + 1);
      if (lo >= hi) continue;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t oh = (ih0 + r) * g.sh - g.ph + a * g.dh;
        if (oh < 0 || oh >= g.oh) continue;
        const float* s = src + r * g.iw;
        float* yr = y + oh * g.ow + offset;
        if (g.sw == 1) {
          for (int64_t j = lo; j < hi; ++j) yr[j] += s[j];
        } else {
          for (int64_t j = lo; j < hi; ++j) yr[j * g.sw] += s[j];
        }
      }
    }
  }
}

Result<WindowGeometry> transposed_geometry(const AttrMap& attrs, const Shape& x, const Shape& w) {
  return make_transposed_window_geometry(attrs, x.dims().subspan(2), w.dims().subspan(2));
}

class ConvTransposeKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const GemmBackend& backend) {
    auto k = std::make_unique<ConvTransposeKernel>();
    k->backend_ = &backend;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "ConvTranspose", init));
    const Tensor* w = init.constants.size() > 1 ? init.constants[1] : nullptr;
    const int64_t group = init.attrs.get_int("group", 1);
    if (w && w->dtype() == DType::F32 && (w->rank() == 3 || w->rank() == 4) && group >= 1 && w->dim(0) % group == 0) {
      const int64_t cg = w->dim(0) / group, rows = w->numel() / std::max<int64_t>(w->dim(0), 1);  // Mg * KH * KW
      for (int64_t g = 0; g < group; ++g)
        k->packed_w_.push_back(PackedMatrix::pack(PackedMatrix::Side::A, rows, cg, w->data_as<float>() + g * cg * rows,
                                                  rows, true, backend));
    }
    // The geometry in the plan's shapes, kept for the runs of those shapes.
    const auto& shapes = init.input_shapes;
    if (shapes.size() > 1 && shapes[0].rank() >= 3 && shapes[0].rank() == shapes[1].rank()) {
      auto wg = transposed_geometry(init.attrs, shapes[0], shapes[1]);
      if (wg) k->plan_geometry_ = *wg;
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // W is read only when it was not packed.
  bool uses_constant_data(int input) const override { return input != 1 || packed_w_.empty(); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (x.rank() != 3 && x.rank() != 4) return reference_->run(ctx);
    if (y.numel() == 0) return Status::ok();
    WindowGeometry wg = plan_geometry_;
    if (!same_spatial(wg, x.shape().dims().subspan(2), w.shape().dims().subspan(2))) {
      IGNIS_ASSIGN_OR_RETURN(wg, transposed_geometry(ctx.attrs(), x.shape(), w.shape()));
    }
    Dims s;
    s.g = as_2d(wg);
    s.n = x.dim(0);
    s.c = x.dim(1);
    s.group = ctx.attrs().get_int("group", 1);
    s.cg = s.c / s.group;
    s.mg = w.dim(1);
    if (s.cg == 0 || wg.in_numel() == 0) return reference_->run(ctx);
    const ConvGeometry2d& g = s.g;
    const bool tiles = g.sh == g.kh && g.sw == g.kw && g.dh == 1 && g.dw == 1 && g.ph == 0 && g.pw == 0 &&
                       g.oh == g.ih * g.kh && g.ow == g.iw * g.kw;
    const float* bias = ctx.has_input(2) ? ctx.input(2).data_as<float>() : nullptr;
    if (tiles) run_tiles(ctx, s, x.data_as<float>(), w.data_as<float>(), bias, y.data_as<float>());
    else run_col2im(ctx, s, x.data_as<float>(), w.data_as<float>(), bias, y.data_as<float>());
    return Status::ok();
  }

 private:
  struct Dims {
    int64_t n = 0, c = 0, group = 1, cg = 0, mg = 0;
    ConvGeometry2d g;
  };

  // Input rows per chunk that keep a chunk's cols block near kChunkFloats.
  static int64_t max_chunk_rows(int64_t rows, int64_t iw) {
    return std::max<int64_t>(1, kChunkFloats / std::max<int64_t>(rows * iw, 1));
  }
  static size_t round_up16(size_t v) { return (v + 15) / 16 * 16; }
  static size_t round_up16(int64_t v) { return round_up16(static_cast<size_t>(v)); }

  // The GEMM of one chunk's cols block [rows x cols] (shape only).
  GemmArgs gemm_shape(const Dims& s, int64_t rows, int64_t cols) const {
    GemmArgs a;
    a.backend = backend_;
    a.m = rows;
    a.n = cols;
    a.k = s.cg;
    a.ldc = cols;
    a.a.packed = packed_w_.empty() ? nullptr : &packed_w_[0];
    return a;
  }

  // The GEMM of image n, group grp, input rows from ih0 (ncols positions) into `cols`.
  GemmArgs chunk_gemm(const GemmArgs& shape, const Dims& s, const float* x, const float* w, int64_t n, int64_t grp,
                      int64_t ih0, int64_t ncols, float* cols) const {
    const int64_t in_plane = s.g.ih * s.g.iw;
    GemmArgs a = shape;
    if (!packed_w_.empty()) a.a.packed = &packed_w_[static_cast<size_t>(grp)];
    else a.a = {.data = w + grp * s.cg * shape.m, .ld = shape.m, .trans = true};
    a.b = {.data = x + (n * s.c + grp * s.cg) * in_plane + ih0 * s.g.iw, .ld = in_plane};
    a.n = ncols;
    a.c = cols;
    a.ldc = ncols;
    return a;
  }

  // General geometry: per chunk, the GEMM over the pool, then col2im split by output channel.
  void run_col2im(KernelContext& ctx, const Dims& s, const float* x, const float* w, const float* bias,
                  float* y) const {
    const ConvGeometry2d& g = s.g;
    const int64_t rows = s.mg * g.kh * g.kw, out_plane = g.oh * g.ow;
    const int64_t chunk_rows = std::min(g.ih, max_chunk_rows(rows, g.iw));
    const GemmArgs shape = gemm_shape(s, rows, chunk_rows * g.iw);
    ThreadPool* pool = ctx.pool();
    const int threads = pool ? pool->threads() : 1;
    const size_t ws_floats = round_up16(gemm_f32_workspace(shape, threads));
    float* ws = static_cast<float*>(ctx.scratch((ws_floats + round_up16(rows * chunk_rows * g.iw)) * sizeof(float)));
    float* cols = ws + ws_floats;
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t grp = 0; grp < s.group; ++grp) {
        float* yg = y + (n * s.group + grp) * s.mg * out_plane;
        const float* bg = bias ? bias + grp * s.mg : nullptr;
        for (int64_t ih0 = 0; ih0 < g.ih; ih0 += chunk_rows) {
          const int64_t nrows = std::min(chunk_rows, g.ih - ih0), ncols = nrows * g.iw;
          gemm_f32(chunk_gemm(shape, s, x, w, n, grp, ih0, ncols, cols), pool, ws);
          add_taps(pool, s, cols, ncols, ih0, nrows, bg, yg);
        }
      }
    }
  }

  // Stride == kernel: each thread runs whole (image, group, chunk) tasks, the GEMM into its
  // own cols block and the store from it while it is in its cache. Chunks are cut so the
  // tasks divide evenly over the threads.
  void run_tiles(KernelContext& ctx, const Dims& s, const float* x, const float* w, const float* bias,
                 float* y) const {
    const ConvGeometry2d& g = s.g;
    const int64_t taps = g.kh * g.kw, rows = s.mg * taps, in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
    ThreadPool* pool = ctx.pool();
    const int64_t threads = pool ? pool->threads() : 1;
    int64_t chunks = ceil_div(g.ih, max_chunk_rows(rows, g.iw));
    if (threads > 1) chunks = std::min(g.ih, ceil_div(std::max(chunks, threads), threads) * threads);
    const int64_t chunk_rows = ceil_div(g.ih, chunks);
    chunks = ceil_div(g.ih, chunk_rows);
    const int64_t tasks = s.n * s.group * chunks;
    const int parts = parallel_parts(pool, s.n * s.group * rows * s.cg * in_plane, tasks);
    GemmArgs shape = gemm_shape(s, rows, chunk_rows * g.iw);
    const size_t per_part = round_up16(gemm_f32_thread_workspace(shape)) + round_up16(rows * chunk_rows * g.iw);
    float* scratch = static_cast<float*>(ctx.scratch(per_part * static_cast<size_t>(parts) * sizeof(float)));
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* ws = scratch + per_part * static_cast<size_t>(part);
        float* cols = ws + round_up16(gemm_f32_thread_workspace(shape));
        for (int64_t t = tasks * part / parts; t < tasks * (part + 1) / parts; ++t) {
          const int64_t chunk = t % chunks, grp = t / chunks % s.group, n = t / chunks / s.group;
          const int64_t ih0 = chunk * chunk_rows, nrows = std::min(chunk_rows, g.ih - ih0), ncols = nrows * g.iw;
          GemmArgs a = chunk_gemm(shape, s, x, w, n, grp, ih0, ncols, cols);
          gemm_f32_range(a, 0, a.m, 0, a.n, ws);
          float* yg = y + (n * s.group + grp) * s.mg * out_plane + ih0 * g.kh * g.ow;
          for (int64_t m = 0; m < s.mg; ++m)
            conv_transpose_f32_store_tiles(cols + m * taps * ncols, ncols, g.kh, g.kw, nrows, g.iw,
                                           bias ? bias[grp * s.mg + m] : 0.0f, yg + m * out_plane);
        }
      }
    };
    if (parts == 1) run_parts(0, 1);
    else parallel_for(pool, parts, 1, run_parts);
  }

  // General geometry: per output channel, the bias fill (first chunk) and col2im.
  static void add_taps(ThreadPool* pool, const Dims& s, const float* cols, int64_t ld, int64_t ih0, int64_t nrows,
                       const float* bias, float* y) {
    const ConvGeometry2d& g = s.g;
    const int64_t taps = g.kh * g.kw, out_plane = g.oh * g.ow;
    const int parts = parallel_parts(pool, s.mg * (taps * ld + (ih0 == 0 ? out_plane : 0)), s.mg);
    auto run_parts = [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        for (int64_t m = s.mg * part / parts; m < s.mg * (part + 1) / parts; ++m) {
          float* plane = y + m * out_plane;
          if (ih0 == 0) std::fill(plane, plane + out_plane, bias ? bias[m] : 0.0f);
          col2im_plane(cols + m * taps * ld, ld, g, ih0, nrows, plane);
        }
      }
    };
    if (parts == 1) run_parts(0, 1);
    else parallel_for(pool, parts, 1, run_parts);
  }

  const GemmBackend* backend_ = nullptr;
  std::unique_ptr<Kernel> reference_;   // 3-D and wider convolutions, empty inputs
  std::vector<PackedMatrix> packed_w_;  // W_g^T per group, when W is constant
  WindowGeometry plan_geometry_;        // in the plan's shapes (rank 0 when they were not given)
};

template <const GemmBackend& (*kBackend)()>
Result<std::unique_ptr<Kernel>> create_conv_transpose(const KernelInit& init) {
  return ConvTransposeKernel::create(init, kBackend());
}

}  // namespace

void register_nn_conv_transpose(KernelRegistry& r) {
  // Priority 10: AVX2 4x24 GEMM; 20: AVX-512 8x32, preferred where the CPU has it.
  r.add({.domain = "", .op_type = "ConvTranspose", .since_opset = 1, .types = kF32, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/convtranspose_f32_4x24", .factory = create_conv_transpose<gemm_backend_avx2>});
  r.add({.domain = "", .op_type = "ConvTranspose", .since_opset = 1, .types = kF32, .isa = Isa::Avx512,
         .priority = 20, .id = "x86/convtranspose_f32_8x32", .factory = create_conv_transpose<gemm_backend_avx512>});
}

}  // namespace ignis::kernels::x86
