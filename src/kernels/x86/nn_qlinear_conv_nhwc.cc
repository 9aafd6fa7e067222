// SPDX-License-Identifier: Apache-2.0
// x86 ai.ignis QLinearConvNhwc: QLinearConv on channels-last tensors, X [N, H, W, C] uint8,
// Y [N, OH, OW, M], ungrouped 2-D, on the int8 GEMM (gemm_int8.h) the other way round from
// the NCHW kernel (nn_qlinear_conv.cc): the output positions are A's rows and the weights are
// B, packed once at session creation as [K x M] with K ordered (ky, kx, c). So a position's
// row of A is its taps' channel runs, which lie contiguous in X: a 1x1 unit-stride unpadded
// convolution reads X itself as A; the others, where C is a multiple of 4 and no row sums are
// needed (below), hand the GEMM a table of one pointer per position and tap (the tap's C bytes
// in X, or C bytes of x's zero point for a tap in the padding) that the VNNI tile reads A
// through; else each tap's C bytes are copied into a chunk of im2col rows that stays in L2. Nothing
// is transposed or packed per run (the NCHW kernel packs im2col(X) into B's panel layout on
// every run and computes extra columns in its phased form), and the output rows are Y's.
//
// Zero points: with A the uint8 bytes of X and B stored as int8 (uint8 weights less 128, as
// PackedInt8B keeps them), sum_k (a - xz)(w - wz_j) = sum_k a b + (off - wz_j) sum_k a -
// xz (sum_k w - K wz_j): the last term and the bias are one int32 per column (col_offset), the
// middle one a row sum times a column value, needed only for nonzero off - wz_j (uint8
// weights, or int8 weights with zero points: not onnxruntime's symmetric default).
// Threads take whole chunks of output rows. int8 X, non-constant weights or zero points and
// float16 scales run the reference kernel.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/conv_geometry.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// im2col rows of about this many bytes per chunk: with a chunk of B (int8_panels_per_chunk)
// they stay in L2.
constexpr int64_t kChunkBytes = int64_t{96} << 10;

class QLinearConvNhwcKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<QLinearConvNhwcKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("ai.ignis", "QLinearConvNhwc", init, init.input_dtypes[0]));
    const auto constant = [&](size_t i) -> const Tensor* { return i < init.constants.size() ? init.constants[i] : nullptr; };
    const Tensor* w = constant(3);
    const Tensor* w_zp = constant(5);
    const bool w_zp_given = init.input_dtypes.size() > 5 && init.input_dtypes[5] != DType::Undefined;
    bool f32_scales = true;
    for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
      f32_scales &= i < init.input_dtypes.size() && init.input_dtypes[i] == DType::F32;
    if (!w || w->rank() != 4 || (w_zp_given && !w_zp) || !f32_scales || init.attrs.get_int("group", 1) != 1 ||
        init.input_dtypes[0] != DType::U8)
      return std::unique_ptr<Kernel>(std::move(k));
    if (w_zp && w_zp->numel() != 1 && w_zp->numel() != w->dim(0)) return std::unique_ptr<Kernel>(std::move(k));
    // W [M, C, KH, KW] as B's columns: column j holds W[j] in (ky, kx, c) order.
    const int64_t m = w->dim(0), c = w->dim(1), taps = w->dim(2) * w->dim(3);
    const int64_t kdim = c * taps;
    std::vector<uint8_t> columns(static_cast<size_t>(m * kdim));
    const auto* src = static_cast<const uint8_t*>(w->data());
    for (int64_t j = 0; j < m; ++j)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t t = 0; t < taps; ++t)
          columns[static_cast<size_t>(j * kdim + t * c + ch)] = src[(j * c + ch) * taps + t];
    const bool w_unsigned = w->dtype() == DType::U8;
    k->b_ = PackedInt8B::pack(columns.data(), w_unsigned, kdim, m, kdim, true);
    const int32_t off = w_unsigned ? 128 : 0;
    k->col_shift_.resize(static_cast<size_t>(m));
    k->weight_terms_.resize(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) {
      const int32_t wz = zero_point_entry(w_zp, j);
      k->col_shift_[static_cast<size_t>(j)] = off - wz;
      k->needs_row_sums_ |= off != wz;
      k->weight_terms_[static_cast<size_t>(j)] = k->b_.column_sums()[j] - static_cast<int32_t>(kdim) * wz;
    }
    k->channels_ = c;
    k->plan_geometry_ = plan_window_geometry(init, 3);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // The GEMM reads the packed weights, never W's data.
  bool uses_constant_data(int input) const override { return input != 3 || b_.empty(); }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (b_.empty() || x.dtype() != DType::U8 || x.rank() != 4 || x.dim(3) != channels_ ||
        ctx.input(1).dtype() != DType::F32 || ctx.input(4).dtype() != DType::F32 || ctx.input(6).dtype() != DType::F32)
      return reference_->run(ctx);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    const Tensor& w = ctx.input(3);
    const int64_t spatial[] = {x.dim(1), x.dim(2)};
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg,
                           run_window_geometry(plan_geometry_, ctx.attrs(), spatial, w.shape().dims().subspan(2)));
    const ConvGeometry2d g = as_2d(wg);
    const int64_t m = b_.n(), kdim = b_.k(), positions = g.oh * g.ow, rows = x.dim(0) * positions;

    // Per-column multipliers, as the reference computes them, and bias with the zero-point term.
    const float xs = ctx.input(1).data_as<float>()[0], ys = ctx.input(6).data_as<float>()[0];
    const Tensor& ws = ctx.input(4);
    const int32_t x_zp = ctx.has_input(2) ? int8_entry(ctx.input(2), 0) : 0;
    const Tensor& yzp = ctx.input(7);
    const bool y_signed = yzp.dtype() == DType::I8;
    const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data_as<int32_t>() : nullptr;
    const size_t cols_bytes = align_up(static_cast<size_t>(m) * sizeof(int32_t));
    const bool direct = wg.is_pointwise();
    // Other convolutions read X in place too where the GEMM takes A through a table of row
    // pointers (one per output position and tap: the tap's channel run, or a run of the zero
    // point outside X), a whole number of depth quads per tap; else their rows are copied.
    const Int8GemmBackend& backend = int8_gemm_backend_default();
    const bool indirect = !direct && backend.indirect_a && !needs_row_sums_ && channels_ % 4 == 0;
    // Rows per chunk: whole 6-row tiles of about kChunkBytes of im2col (or of the rows' bytes
    // the table points at); the direct form takes each thread's rows at once.
    const int64_t chunk_rows = direct ? rows : std::max<int64_t>(6, kChunkBytes / std::max<int64_t>(kdim, 1) / 6 * 6);
    ThreadPool* pool = ctx.pool();
    const int64_t threads = pool ? pool->threads() : 1;
    // Below ~256 Ki multiply-adds a second thread costs more than it saves (as in gemm_u8s8).
    const int64_t parts = std::clamp<int64_t>(rows * kdim * m >> 18, 1, std::min<int64_t>(threads, (rows + 5) / 6));
    const int64_t taps = g.kh * g.kw, table_stride = chunk_rows + 5;
    const size_t a_bytes = direct     ? 0
                           : indirect ? align_up(static_cast<size_t>(taps * table_stride) * sizeof(const uint8_t*))
                                      : align_up(static_cast<size_t>(chunk_rows * kdim));
    const size_t zp_bytes = indirect ? align_up(static_cast<size_t>(channels_)) : 0;
    const size_t sums_bytes = needs_row_sums_ ? align_up(static_cast<size_t>(std::min(rows, chunk_rows)) * sizeof(int32_t)) : 0;
    const size_t per_part = a_bytes + sums_bytes;
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(2 * cols_bytes + zp_bytes + per_part * static_cast<size_t>(parts)));
    auto* multiplier = reinterpret_cast<float*>(scratch);
    auto* col_offset = reinterpret_cast<int32_t*>(scratch + cols_bytes);
    uint8_t* zp_run = scratch + 2 * cols_bytes;  // the taps outside X read C zero points here
    if (indirect) std::memset(zp_run, static_cast<uint8_t>(x_zp), static_cast<size_t>(channels_));
    // Each tap's input row and column offsets from the window's corner, and its byte offset in X.
    std::vector<int64_t> tap_dy(static_cast<size_t>(taps)), tap_dx(static_cast<size_t>(taps)),
        tap_offset(static_cast<size_t>(taps));
    for (int64_t t = 0; t < taps; ++t) {
      tap_dy[static_cast<size_t>(t)] = t / g.kw * g.dh;
      tap_dx[static_cast<size_t>(t)] = t % g.kw * g.dw;
      tap_offset[static_cast<size_t>(t)] = (tap_dy[static_cast<size_t>(t)] * g.iw + tap_dx[static_cast<size_t>(t)]) * channels_;
    }
    const int64_t max_dx = (g.kw - 1) * g.dw;
    for (int64_t j = 0; j < m; ++j) {
      multiplier[j] = xs * ws.data_as<float>()[ws.numel() == 1 ? 0 : j] / ys;
      col_offset[j] = (bias ? bias[j] : 0) - x_zp * weight_terms_[static_cast<size_t>(j)];
    }
    const auto* xb = static_cast<const uint8_t*>(x.data());
    auto* yb = static_cast<uint8_t*>(y.data());
    const int64_t cin = channels_, kw = g.kw;
    // Whole 6-row groups per part; each part walks its rows in chunks.
    const int64_t groups = (rows + 5) / 6;
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        uint8_t* mine = scratch + 2 * cols_bytes + zp_bytes + per_part * static_cast<size_t>(part);
        uint8_t* a_chunk = mine;
        auto* row_sums = reinterpret_cast<int32_t*>(mine + a_bytes);
        const int64_t r_end = std::min(rows, groups * (part + 1) / parts * 6);
        for (int64_t r0 = std::min(rows, groups * part / parts * 6); r0 < r_end; r0 += chunk_rows) {
          const int64_t r1 = std::min(r_end, r0 + chunk_rows);
          const uint8_t* a = xb + r0 * cin;
          auto* table = reinterpret_cast<const uint8_t**>(a_chunk);
          if (indirect) {
            // Entry (t, r - r0) for rows r0 .. r1 - 1, walking the output positions in order,
            // then four more repeating the last: the GEMM computes whole groups of six.
            int64_t image = r0 / positions, oy = r0 % positions / g.ow, ox = r0 % g.ow;
            for (int64_t r = r0; r < r1; ++r) {
              const int64_t iy0 = oy * g.sh - g.ph, ix0 = ox * g.sw - g.pw;
              const int64_t at = ((image * g.ih + iy0) * g.iw + ix0) * cin;  // may lie outside X
              const bool inside = iy0 >= 0 && iy0 + tap_dy.back() < g.ih && ix0 >= 0 && ix0 + max_dx < g.iw;
              for (int64_t t = 0; t < taps; ++t) {
                const auto iy = static_cast<uint64_t>(iy0 + tap_dy[t]), ix = static_cast<uint64_t>(ix0 + tap_dx[t]);
                table[t * table_stride + (r - r0)] =
                    inside || (iy < static_cast<uint64_t>(g.ih) && ix < static_cast<uint64_t>(g.iw)) ? xb + (at + tap_offset[t])
                                                                                                     : zp_run;
              }
              if (++ox == g.ow) {
                ox = 0;
                if (++oy == g.oh) oy = 0, ++image;
              }
            }
            for (int64_t t = 0; t < taps; ++t)
              std::fill_n(table + t * table_stride + (r1 - r0), 5, table[t * table_stride + (r1 - 1 - r0)]);
          } else if (!direct) {
            for (int64_t r = r0; r < r1; ++r) {
              const int64_t image = r / positions, oy = r % positions / g.ow, ox = r % g.ow;
              uint8_t* dst = a_chunk + (r - r0) * kdim;
              for (int64_t t = 0; t < taps; ++t, dst += cin) {
                const int64_t iy = oy * g.sh - g.ph + t / kw * g.dh, ix = ox * g.sw - g.pw + t % kw * g.dw;
                if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw)
                  std::memset(dst, static_cast<uint8_t>(x_zp), static_cast<size_t>(cin));
                else
                  std::memcpy(dst, xb + ((image * g.ih + iy) * g.iw + ix) * cin, static_cast<size_t>(cin));
              }
            }
            a = a_chunk;
          }
          Int8GemmArgs args;
          args.m = r1 - r0;
          args.a = a;
          args.lda = kdim;
          if (indirect) {
            args.a = nullptr;
            args.a_table = table;
            args.a_taps = taps;
            args.a_table_stride = table_stride;
          }
          args.b = &b_;
          if (needs_row_sums_) {
            int8_row_sums(a, args.m, kdim, kdim, row_sums);
            args.row_sum = row_sums;
            args.col_shift = col_shift_.data();
          }
          args.col_offset = col_offset;
          args.c_q = yb + r0 * m;
          args.ldc = m;
          args.q_signed = y_signed;
          args.q_col_scale = multiplier;
          args.q_zero_point = int8_entry(yzp, 0);
          args.q_min = y_signed ? -128 : 0;
          args.q_max = y_signed ? 127 : 255;
          gemm_u8s8(args, nullptr, backend);
        }
      }
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;
  PackedInt8B b_;                      // the weights as B [K x M]; empty: the reference runs
  std::vector<int32_t> col_shift_;     // off - wz_j
  std::vector<int32_t> weight_terms_;  // sum_k w - K wz_j
  bool needs_row_sums_ = false;
  int64_t channels_ = 0;
  WindowGeometry plan_geometry_;
};

}  // namespace

void register_nn_qlinear_conv_nhwc(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "QLinearConvNhwc", .since_opset = 1, .until_opset = 1,
         .types = DTypeSet{DType::U8, DType::I8}, .isa = Isa::Avx2, .priority = 10, .id = "x86/qlinearconvnhwc_u8s8",
         .factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
           return QLinearConvNhwcKernel::create(init);
         }});
}

}  // namespace ignis::kernels::x86
