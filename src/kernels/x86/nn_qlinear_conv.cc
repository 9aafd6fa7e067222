// SPDX-License-Identifier: Apache-2.0
// x86 QLinearConv and ConvInteger (1-D and 2-D, NCHW) on the int8 GEMM (gemm_int8.h) and the
// direct depthwise kernel (conv_int8.h). ConvInteger is the same sums stored as int32: no
// requantization, and its zero points may be absent (0).
//
// Per image, Y [Cout x OH*OW] = W [Cout x Cin*KH*KW] * im2col(X): the weights are the GEMM's
// A rows (uint8, int8 weights flipped to w + 128 with their zero points moved likewise; or int8
// as they are where the GEMM backend takes signed A and the weights are symmetric),
// prepared once with their row sums when W and its zero point are constant, and im2col(X) is
// B, packed per run in chunks of output positions that fit in L2 (int8_panels_per_chunk):
// 1x1 unit-stride unpadded convolutions pack X's channel rows directly, the others shifted
// views of the phase planes of X padded with its zero point (run_gemm); no im2col is written.
// Each chunk runs every row block of W before the next chunk is packed, and the requantizing
// epilogue writes Y's rows (output channels) in NCHW.
// Threads take whole chunks (images x chunks), or share a chunk by output-channel blocks when
// there are fewer chunks than threads. Depthwise convolutions (one input and one output channel
// per group) run a direct kernel, planes split over the threads: on AVX-512 VBMI the one with
// output positions in the lanes where its geometry and int8 weights allow, else channels in
// the lanes or one plane at a time. Other grouped convolutions, 3-D ones, strides whose phases
// exceed 64 and float16 scales go to the reference.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/conv_geometry.h"
#include "core/cpu_features.h"
#include "kernels/x86/conv_int8.h"
#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// Input positions of QLinearConv, and of ConvInteger (x, w, x_zero_point, w_zero_point; no
// scales or bias, -1, and an int32 output: the sums themselves).
struct ConvInputs {
  int x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias;
  bool int32_out() const { return y_zp < 0; }
};
constexpr ConvInputs kQLinearConv{0, 1, 2, 3, 4, 5, 6, 7, 8};
constexpr ConvInputs kConvInteger{0, -1, 2, 1, -1, 3, -1, -1, -1};

// W as the GEMM's A operand: rows [Cout x K], each row's zero point and sum. uint8 rows (int8
// weights flipped to w + 128, their zero points moved likewise), or, for a GEMM backend that
// takes signed A (Int8GemmBackend::signed_a), int8 weights as they are when every zero point is
// 0 and no weight is -128 (onnxruntime's symmetric per-channel weights).
struct WeightRows {
  std::vector<uint8_t> rows;
  std::vector<int32_t> zero_points, sums;
  int64_t k = 0;
  bool any_zero_point = false;
  bool one_zero_point = true;  // every row's is zero_points[0]
  bool is_signed = false;      // int8 values, held only as `split` (Int8GemmArgs::a_signed)
  Int8PairSplit split;         // with is_signed, the rows split for the AVX2 tile (rows then empty)
  bool empty() const { return rows.empty() && split.main.empty(); }
};

WeightRows make_weight_rows(const Tensor& w, const Tensor* zp, bool signed_a) {
  WeightRows r;
  const int64_t m = w.dim(0);
  r.k = w.numel() / std::max<int64_t>(m, 1);
  const bool flip = w.dtype() == DType::I8;
  const auto* src = static_cast<const uint8_t*>(w.data());
  const auto* zp_bytes = zp ? static_cast<const uint8_t*>(zp->data()) : nullptr;
  const int64_t zp_count = zp ? zp->numel() : 0;
  r.is_signed = signed_a && flip && std::all_of(zp_bytes, zp_bytes + zp_count, [](uint8_t z) { return z == 0; }) &&
                std::find(src, src + w.numel(), uint8_t{0x80}) == src + w.numel();
  if (!r.is_signed) {
    r.rows.assign(src, src + w.numel());
    if (flip)
      for (uint8_t& v : r.rows) v ^= 0x80u;
  }
  r.zero_points.resize(static_cast<size_t>(m));
  r.sums.resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    r.zero_points[static_cast<size_t>(i)] =
        r.is_signed ? 0 : zero_point_entry(zp, i) + (flip ? 128 : 0);
    r.any_zero_point |= r.zero_points[static_cast<size_t>(i)] != 0;
    r.one_zero_point &= r.zero_points[static_cast<size_t>(i)] == r.zero_points[0];
  }
  if (r.is_signed) {
    // The tile reads only the split, which has the row sums too: one copy of the weights.
    int8_split_pairs(reinterpret_cast<const int8_t*>(src), r.k, r.k, 0, m, r.split);
    r.sums = r.split.sums;
  } else {
    int8_row_sums(r.rows.data(), m, r.k, r.k, r.sums.data());
  }
  return r;
}

// Depthwise weights [C, 1, KH, KW] as int32 w - w_zp[c].
std::vector<int32_t> centered_weights(const Tensor& w, const Tensor* zp) {
  const int64_t channels = w.dim(0), taps = w.numel() / std::max<int64_t>(channels, 1);
  std::vector<int32_t> out(static_cast<size_t>(w.numel()));
  for (int64_t c = 0; c < channels; ++c) {
    const int32_t z = zero_point_entry(zp, c);
    for (int64_t t = 0; t < taps; ++t)
      out[static_cast<size_t>(c * taps + t)] = int8_entry(w, c * taps + t) - z;
  }
  return out;
}

// Whether every value fits int8 (the VBMI depthwise kernel's weights).
bool fit_int8(const std::vector<int32_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int32_t w) { return w >= -128 && w <= 127; });
}

// The scalars and per-channel values of one run.
struct QuantParams {
  std::vector<float> multiplier;  // x_scale * w_scale[c] / y_scale, as the reference computes it
  int32_t x_zp = 0, y_zp = 0, q_min = 0, q_max = 255;
  bool x_signed = false, y_signed = false;
  bool int32_out = false;  // ConvInteger: the sums, not requantized
  const int32_t* bias = nullptr;
};

QuantParams quant_params(const KernelContext& ctx, const ConvInputs& in, int64_t channels) {
  QuantParams q;
  const Tensor& x = ctx.input(in.x);
  q.x_signed = x.dtype() == DType::I8;
  q.x_zp = ctx.has_input(in.x_zp) ? int8_entry(ctx.input(in.x_zp), 0) : 0;
  if (in.int32_out()) {
    q.int32_out = true;
    return q;
  }
  const float xs = ctx.input(in.x_scale).data_as<float>()[0], ys = ctx.input(in.y_scale).data_as<float>()[0];
  const Tensor& ws = ctx.input(in.w_scale);
  q.multiplier.resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    q.multiplier[static_cast<size_t>(c)] = xs * ws.data_as<float>()[ws.numel() == 1 ? 0 : c] / ys;
  const Tensor& yzp = ctx.input(in.y_zp);
  q.y_signed = yzp.dtype() == DType::I8;
  q.y_zp = int8_entry(yzp, 0);
  q.q_min = q.y_signed ? -128 : 0;
  q.q_max = q.y_signed ? 127 : 255;
  q.bias = ctx.has_input(in.bias) ? ctx.input(in.bias).data_as<int32_t>() : nullptr;
  return q;
}

// QLinearConv, or ConvInteger (the same sums, stored as int32).
class QLinearConvKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const ConvInputs& in) {
    auto k = std::make_unique<QLinearConvKernel>();
    k->in_ = in;
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", in.int32_out() ? "ConvInteger" : "QLinearConv",
                                                                init, init.input_dtypes[0]));
    const auto constant = [&](int i) -> const Tensor* {
      return static_cast<size_t>(i) < init.constants.size() ? init.constants[static_cast<size_t>(i)] : nullptr;
    };
    const Tensor* w = constant(in.w);
    // A zero point not given is 0 (ConvInteger's are optional): no tensor to read.
    const bool w_zp_given = static_cast<size_t>(in.w_zp) < init.input_dtypes.size() &&
                            init.input_dtypes[static_cast<size_t>(in.w_zp)] != DType::Undefined;
    const Tensor* w_zp = constant(in.w_zp);
    // Weights are prepared (and W's data then never read) only where no run can fall back to
    // the reference kernel: float32 scales, and strides the fast paths take.
    bool f32_scales = true;
    for (int i : {in.x_scale, in.w_scale, in.y_scale})
      f32_scales &= i < 0 || (static_cast<size_t>(i) < init.input_dtypes.size() &&
                              init.input_dtypes[static_cast<size_t>(i)] == DType::F32);
    const std::vector<int64_t> strides = init.attrs.get_ints("strides");
    int64_t phases = 1;
    for (int64_t v : strides) phases *= std::max<int64_t>(v, 1);
    const int64_t group = init.attrs.get_int("group", 1);
    const bool usable = w && (w_zp || !w_zp_given) && f32_scales && (w->rank() == 3 || w->rank() == 4) &&
                        (!w_zp || w_zp->numel() == 1 || w_zp->numel() == w->dim(0));
    if (usable && group == 1 && phases <= 64)
      k->weights_ = make_weight_rows(*w, w_zp, int8_gemm_backend_default().signed_a);
    // Depthwise weights (one input channel per group) as int32 with their zero points taken off.
    const bool depthwise_strides = strides.empty() || strides.back() <= 2;
    if (usable && w->rank() == 4 && w->dim(1) == 1 && group == w->dim(0) && group > 1 && depthwise_strides &&
        w->dim(2) * w->dim(3) <= 64) {
      k->depthwise_w_ = centered_weights(*w, w_zp);
      k->depthwise_w_int8_ = fit_int8(k->depthwise_w_);
    }
    k->plan_geometry_ = plan_window_geometry(init, in.w);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // The GEMM and depthwise paths read the prepared weights, never W's data.
  bool uses_constant_data(int input) const override {
    return input != in_.w || (weights_.empty() && depthwise_w_.empty());
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(in_.x);
    const Tensor& w = ctx.input(in_.w);
    Tensor& y = ctx.output(0);
    const bool f32_scales = in_.int32_out() || (ctx.input(in_.x_scale).dtype() == DType::F32 &&
                                                ctx.input(in_.w_scale).dtype() == DType::F32 &&
                                                ctx.input(in_.y_scale).dtype() == DType::F32);
    const Tensor* w_zp = ctx.has_input(in_.w_zp) ? &ctx.input(in_.w_zp) : nullptr;
    if ((x.rank() != 3 && x.rank() != 4) || !f32_scales) return reference_->run(ctx);
    if (y.numel() == 0) return Status::ok();
    IGNIS_ASSIGN_OR_RETURN(const WindowGeometry wg, run_window_geometry(plan_geometry_, ctx.attrs(),
                                                                         x.shape().dims().subspan(2),
                                                                         w.shape().dims().subspan(2)));
    const ConvGeometry2d g = as_2d(wg);
    const int64_t group = ctx.attrs().get_int("group", 1);
    const int64_t cout = w.dim(0);
    if (group == 1 && g.sh * g.sw <= 64) {
      if (!weights_.empty()) {
        run_gemm(ctx, weights_, g, wg.is_pointwise());
      } else {
        const WeightRows rows = make_weight_rows(w, w_zp, int8_gemm_backend_default().signed_a);
        run_gemm(ctx, rows, g, wg.is_pointwise());
      }
      return Status::ok();
    }
    if (w.dim(1) == 1 && group == cout && x.dim(1) == group && conv_int8_depthwise_supported(g)) {
      run_depthwise(ctx, g, w, w_zp);
      return Status::ok();
    }
    return reference_->run(ctx);
  }

 private:
  // The GEMM over chunks of B's columns. B's rows are X's channel rows for 1x1 unit-stride
  // unpadded convolutions; otherwise the input is first split into the phase planes of its
  // strides, padded with its zero point (conv_int8_phase_planes: one plane of PH x PW per
  // channel with unit strides), of width PW >= OW + (KW - 1) * DW / SW. Then tap (ky, kx) of
  // output position oy * PW + ox reads its phase plane at (oy * PW + ox) + (ky * DH / SH) * PW +
  // kx * DW / SW, so every im2col row is a plane, shifted. The GEMM computes PW - OW extra
  // columns per output row (3% at 56 wide, 28% at 7) into a buffer the valid columns are
  // copied from, instead of writing K bytes of im2col per output value.
  void run_gemm(KernelContext& ctx, const WeightRows& wr, const ConvGeometry2d& g, bool pointwise) const {
    const Tensor& x = ctx.input(in_.x);
    const int64_t batch = x.dim(0), cin = x.dim(1), m = static_cast<int64_t>(wr.zero_points.size());
    const int64_t kdim = wr.k, positions = g.oh * g.ow, in_plane = g.ih * g.iw;
    const QuantParams q = quant_params(ctx, in_, m);
    const auto* xb = static_cast<const uint8_t*>(x.data());
    auto* yb = static_cast<uint8_t*>(ctx.output(0).data());
    // Bytes per output value: 1 requantized, 4 as int32 sums.
    const int64_t out_bytes = q.int32_out ? 4 : 1;
    const bool phased = !pointwise;
    // Phase planes of PH x PW: the padded extent divided by the strides, rounded up.
    const int64_t pw = ((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + g.sw) / g.sw;
    const int64_t ph = ((g.oh - 1) * g.sh + (g.kh - 1) * g.dh + g.sh) / g.sh, plane = ph * pw;
    const int64_t phases = g.sh * g.sw;
    const int64_t columns = phased ? g.oh * pw : positions;  // of B, per image

    ThreadPool* pool = ctx.pool();
    const int64_t threads = pool ? pool->threads() : 1;
    // Below ~256 Ki multiply-adds a second thread costs more than it saves (as in gemm_u8s8).
    const int64_t work = m * kdim * positions * batch;
    const int64_t parts = std::clamp<int64_t>(work >> 18, 1, threads);
    // Chunks of B's columns that fit in L2, as many as a whole number of them per thread where
    // the columns allow (each thread packs its own chunks: split by rows, both would pack the
    // same one; 3 chunks on 2 threads run 2 on one), of at most the columns there are (a
    // shallow K, as a squeeze-excitation's 1x1 convolutions on one position, would otherwise
    // size scratch for an L2's worth).
    const int64_t column_panels = (columns + kInt8PanelCols - 1) / kInt8PanelCols;
    int64_t chunks = (column_panels + int8_panels_per_chunk(kdim) - 1) / int8_panels_per_chunk(kdim);
    if (batch < parts) chunks = std::min(column_panels, (chunks + parts - 1) / parts * parts);
    // Panels per chunk rounded up to even where the number of chunks stays (the tiles take
    // panels in pairs; see int8_panels_per_chunk).
    int64_t chunk_panels = (column_panels + chunks - 1) / chunks;
    if (chunk_panels > 1 && chunk_panels % 2 != 0 && (column_panels + chunk_panels) / (chunk_panels + 1) == chunks)
      ++chunk_panels;
    const int64_t chunk_cols = chunk_panels * kInt8PanelCols;
    chunks = (columns + chunk_cols - 1) / chunk_cols;
    const int64_t items = batch * chunks;
    // Fewer chunks than threads: each chunk is shared by row blocks (whole 6-row tiles).
    const int64_t row_splits = items >= parts ? 1 : std::min((parts + items - 1) / items, (m + 5) / 6);
    const int64_t units = items * row_splits;

    // Shared: the phase planes and the folded bias. Per part: the packed chunk, its column sums
    // and corrections, B's row pointers and the chunk's output (phased).
    const int64_t panels = chunk_cols / kInt8PanelCols;
    const size_t padded_bytes = phased ? align_up(static_cast<size_t>(batch * cin * phases * plane + pw + 64)) : 0;
    const size_t bias_bytes = align_up(static_cast<size_t>(m) * sizeof(int32_t));
    const size_t packed_bytes = align_up(static_cast<size_t>(panels * ((kdim + 3) / 4) * 4 * kInt8PanelCols));
    const size_t cols_bytes = align_up(static_cast<size_t>(chunk_cols) * sizeof(int32_t));
    const size_t ptr_bytes = align_up(static_cast<size_t>(kdim) * sizeof(const uint8_t*));
    const size_t extra_bytes = phased ? align_up(static_cast<size_t>(m * chunk_cols * out_bytes)) : 0;
    const size_t per_part = packed_bytes + 3 * cols_bytes + ptr_bytes + extra_bytes;
    auto* scratch =
        static_cast<uint8_t*>(ctx.scratch(padded_bytes + bias_bytes + per_part * static_cast<size_t>(parts)));
    uint8_t* padded = scratch;
    if (phased) {
      uint64_t used = 0;
      for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) used |= uint64_t{1} << (ky * g.dh % g.sh * g.sw + kx * g.dw % g.sw);
      conv_int8_phase_planes(xb, batch * cin, g, ph, pw, used, static_cast<uint8_t>(q.x_zp), padded);
      std::memset(padded + batch * cin * phases * plane, static_cast<uint8_t>(q.x_zp), static_cast<size_t>(pw + 64));
    }

    const int32_t off = q.x_signed ? 0 : 128;
    const bool shifted_zp = off != q.x_zp;
    // With one weight zero point z (per-tensor, or int8 weights with zero points 0), the whole
    // correction (gemm_int8.h) is sum_k w (off - x_zp) + z K x_zp per row, folded into the
    // bias, and -z sum_k x per column (col_offset): no multiply per output. The int32 output
    // has no bias to fold into: it takes the general form.
    const bool folded = wr.one_zero_point && !q.int32_out;
    const int32_t z = wr.zero_points.empty() ? 0 : wr.zero_points[0];
    auto* row_bias = reinterpret_cast<int32_t*>(scratch + padded_bytes);
    if (folded)
      for (int64_t i = 0; i < m; ++i)
        row_bias[i] = (q.bias ? q.bias[i] : 0) + wr.sums[static_cast<size_t>(i)] * (off - q.x_zp) +
                      z * static_cast<int32_t>(kdim) * q.x_zp;
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        uint8_t* mine = scratch + padded_bytes + bias_bytes + per_part * static_cast<size_t>(part);
        auto* packed = reinterpret_cast<int8_t*>(mine);
        auto* col_sums = reinterpret_cast<int32_t*>(mine + packed_bytes);
        auto* col_corr = reinterpret_cast<int32_t*>(mine + packed_bytes + cols_bytes);
        auto* col_shift = reinterpret_cast<int32_t*>(mine + packed_bytes + 2 * cols_bytes);
        auto* rows = reinterpret_cast<const uint8_t**>(mine + packed_bytes + 3 * cols_bytes);
        uint8_t* extra = mine + packed_bytes + 3 * cols_bytes + ptr_bytes;
        std::fill_n(col_shift, chunk_cols, off - q.x_zp);
        int64_t packed_item = -1, rows_image = -1;
        for (int64_t u = units * part / parts; u < units * (part + 1) / parts; ++u) {
          const int64_t item = u / row_splits, split = u % row_splits;
          const int64_t image = item / chunks, p0 = item % chunks * chunk_cols;
          const int64_t cols = std::min(chunk_cols, columns - p0);
          if (item != packed_item) {
            if (image != rows_image) {
              for (int64_t r = 0; r < kdim; ++r) {
                if (!phased) {
                  rows[r] = xb + (image * cin + r) * in_plane;
                } else {
                  const int64_t c = r / (g.kh * g.kw), ky = r / g.kw % g.kh * g.dh, kx = r % g.kw * g.dw;
                  const int64_t phase = ky % g.sh * g.sw + kx % g.sw;
                  rows[r] = padded + ((image * cin + c) * phases + phase) * plane + ky / g.sh * pw + kx / g.sw;
                }
              }
              rows_image = image;
            }
            // Column sums only where a correction reads them (not for int8 weights with zero
            // points 0 folded: onnxruntime's default).
            const bool sums_needed = !folded || z != 0;
            int8_pack_rows(rows, p0, kdim, cols, !q.x_signed, packed, sums_needed ? col_sums : nullptr);
            if (folded) {
              if (z != 0)
                for (int64_t j = 0; j < cols; ++j) col_corr[j] = -z * col_sums[j];
            } else {
              for (int64_t j = 0; j < cols; ++j) col_corr[j] = col_sums[j] - static_cast<int32_t>(kdim) * q.x_zp;
            }
            packed_item = item;
          }
          const PackedInt8B b = PackedInt8B::view(packed, col_sums, !q.x_signed, kdim, cols);
          uint8_t* y_image = yb + image * m * positions * out_bytes;
          Int8GemmArgs a;
          a.m = m;
          a.a = wr.rows.data();
          a.lda = kdim;
          a.b = &b;
          if (wr.is_signed) {
            a.a_signed = wr.split.main.data();  // not read: the split stands for it
            a.a_split = &wr.split;
          }
          if (folded) {
            // int8 weights (zero point 0, onnxruntime's default): no column term at all.
            a.col_offset = z != 0 ? col_corr : nullptr;
          } else {
            a.row_zp = wr.any_zero_point ? wr.zero_points.data() : nullptr;
            a.row_sum = shifted_zp ? wr.sums.data() : nullptr;
            a.col_shift = shifted_zp ? col_shift : nullptr;
            a.col_corr = col_corr;
          }
          if (q.int32_out)
            a.c_i32 = phased ? reinterpret_cast<int32_t*>(extra) : reinterpret_cast<int32_t*>(y_image) + p0;
          else
            a.c_q = phased ? extra : y_image + p0;
          a.ldc = phased ? cols : positions;
          a.q_signed = q.y_signed;
          a.q_bias = folded ? row_bias : q.bias;
          a.q_row_scale = q.multiplier.data();
          a.q_zero_point = q.y_zp;
          a.q_min = q.q_min;
          a.q_max = q.q_max;
          const int64_t tiles = (m + 5) / 6;
          const int64_t r0 = std::min(m, tiles * split / row_splits * 6);
          const int64_t r1 = std::min(m, tiles * (split + 1) / row_splits * 6);
          if (r1 <= r0) continue;
          int8_gemm_backend_default().range(a, r0, r1, 0, b.panels());
          if (phased && q.int32_out)
            copy_valid_columns(reinterpret_cast<const int32_t*>(extra), cols, r0, r1, p0, pw, g,
                               reinterpret_cast<int32_t*>(y_image));
          else if (phased)
            copy_valid_columns(extra, cols, r0, r1, p0, pw, g, y_image);
        }
      }
    });
  }

  // Rows [r0, r1) of a chunk of the phased form's output (columns [p0, p0 + cols) of the
  // oh x pw grid, at `chunk` with leading dimension cols) into y's oh x ow planes.
  template <class T>
  static void copy_valid_columns(const T* chunk, int64_t cols, int64_t r0, int64_t r1, int64_t p0, int64_t pw,
                                 const ConvGeometry2d& g, T* y) {
    const int64_t positions = g.oh * g.ow;
    for (int64_t oy = p0 / pw; oy * pw < p0 + cols && oy < g.oh; ++oy) {
      const int64_t a = std::max(p0, oy * pw), b = std::min(p0 + cols, oy * pw + g.ow);
      if (b <= a) continue;
      for (int64_t r = r0; r < r1; ++r)
        std::memcpy(y + r * positions + oy * g.ow + (a - oy * pw), chunk + r * cols + (a - p0),
                    static_cast<size_t>(b - a) * sizeof(T));
    }
  }

  void run_depthwise(KernelContext& ctx, const ConvGeometry2d& g, const Tensor& w, const Tensor* wzp) const {
    const Tensor& x = ctx.input(in_.x);
    const int64_t batch = x.dim(0), channels = x.dim(1), taps = g.kh * g.kw;
    const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
    const QuantParams q = quant_params(ctx, in_, channels);
    std::vector<int32_t> wc_now;
    if (depthwise_w_.empty()) wc_now = centered_weights(w, wzp);
    const std::vector<int32_t>& wc = depthwise_w_.empty() ? wc_now : depthwise_w_;
    const auto* xb = static_cast<const uint8_t*>(x.data());
    auto* yb = static_cast<uint8_t*>(ctx.output(0).data());
    const int64_t planes = batch * channels;
    ThreadPool* pool = ctx.pool();
    // int32 sums (ConvInteger) only from the AVX2 per-plane kernel, which every x86 CPU here runs.
    const bool avx512 = &int8_gemm_backend_default() == &int8_gemm_backend_vnni() && !q.int32_out;
    const bool lanes = avx512 && channels >= kMinLaneChannels && in_plane <= kMaxLanePlane;
    // Output positions in the lanes (VBMI) where the geometry and int8 weights allow: faster than
    // both others on every MobileNet v2 and EfficientNet layer (Zen 4, one thread, against the
    // faster of the two: 112x112 2.4x, 56x56 1.9x, 28x28 2.0x, 14x14 1.6x, 7x7 1.2x; strides 2
    // and 5x5 kernels 1.06-2.9x).
    const bool vbmi = avx512 && cpu_features().avx512vbmi && conv_int8_depthwise_vbmi_supported(g) &&
                      (depthwise_w_.empty() ? fit_int8(wc) : depthwise_w_int8_);
    if (vbmi) {
      run_depthwise_channels(ctx, g, q, wc, 1, conv_int8_depthwise_vbmi_scratch(g), conv_int8_depthwise_vbmi);
      return;
    }
    if (lanes) {
      run_depthwise_channels(ctx, g, q, wc, 16, conv_int8_depthwise_lanes_scratch(g), conv_int8_depthwise_lanes_avx512);
      return;
    }
    if (!avx512 && !q.int32_out && channels >= kMinLaneChannels && out_plane <= kMaxLaneOutputsAvx2) {
      run_depthwise_channels(ctx, g, q, wc, 16, conv_int8_depthwise_lanes_avx2_scratch(g), conv_int8_depthwise_lanes_avx2);
      return;
    }
    const int parts = parallel_parts(pool, planes * out_plane * taps, planes);
    const size_t per_part =
        align_up(avx512 ? conv_int8_depthwise_avx512_scratch(g) : conv_int8_depthwise_scratch(g));
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(per_part * static_cast<size_t>(parts)));
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        for (int64_t pl = planes * part / parts; pl < planes * (part + 1) / parts; ++pl) {
          const int64_t c = pl % channels;
          DepthwiseInt8Plane p;
          p.x = xb + pl * in_plane;
          p.w = wc.data() + c * taps;
          p.bias = q.bias ? q.bias[c] : 0;
          p.x_zero_point = q.x_zp;
          p.multiplier = q.int32_out ? 1.0f : q.multiplier[static_cast<size_t>(c)];
          p.y_zero_point = q.y_zp;
          p.q_min = q.q_min;
          p.q_max = q.q_max;
          p.x_signed = q.x_signed;
          p.y_signed = q.y_signed;
          if (q.int32_out) p.y32 = reinterpret_cast<int32_t*>(yb) + pl * out_plane;
          else p.y = yb + pl * out_plane;
          uint8_t* mine = scratch + per_part * static_cast<size_t>(part);
          if (avx512) conv_int8_depthwise_avx512(g, p, mine);
          else conv_int8_depthwise_avx2(g, p, mine);
        }
      }
    });
  }

  // Blocks of 16 channels in the vector lanes beat planes walked one at a time from 8 channels
  // on (fewer leave too many lanes idle) and on input planes up to 56x56 (MobileNet v2's
  // layers on Zen 5, one thread: 7x7 2.8x, 14x14 1.9x, 28x28 1.45x, 56x56 1.1x faster); at
  // 112x112 the padded block of int32 lanes (830 KB) outgrows the caches and the per-plane walk
  // wins (1.3x at stride 2).
  static constexpr int64_t kMinLaneChannels = 8, kMaxLanePlane = 56 * 56;
  // On AVX2 (blocks of 16 channels as int16 lanes, taps in pairs) the same holds up to 56x56
  // outputs, also from a 112x112 input at stride 2; at 112x112 outputs the planes win (Zen 3,
  // one thread, single layers against the per-plane kernel: 7x7x960 5x, 56x56x144 1.15x,
  // 112x112 -> 56x56 x96 1.3x, 112x112x32 0.9x).
  static constexpr int64_t kMaxLaneOutputsAvx2 = 56 * 56;

  using ChannelsKernel = void (*)(const ConvGeometry2d&, const DepthwiseInt8Channels&, int64_t, int64_t, uint8_t*);

  // The depthwise convolution by a kernel that takes a range of channels of one image (in
  // blocks of `block` from the range's start), with `scratch_bytes` of scratch per call: the
  // images' blocks split over the threads, each thread's consecutive blocks of one image in
  // one call.
  static void run_depthwise_channels(KernelContext& ctx, const ConvGeometry2d& g, const QuantParams& q,
                                     const std::vector<int32_t>& wc, int64_t block, size_t scratch_bytes,
                                     ChannelsKernel kernel) {
    const Tensor& x = ctx.input(0);  // X is input 0 of both ops
    const int64_t batch = x.dim(0), channels = x.dim(1);
    const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
    const int64_t blocks = (channels + block - 1) / block, units = batch * blocks;
    ThreadPool* pool = ctx.pool();
    const int parts = parallel_parts(pool, batch * channels * out_plane * g.kh * g.kw, units);
    const size_t per_part = align_up(scratch_bytes);
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(per_part * static_cast<size_t>(parts)));
    const auto* xb = static_cast<const uint8_t*>(x.data());
    auto* yb = static_cast<uint8_t*>(ctx.output(0).data());
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t u_end = units * (part + 1) / parts;
        for (int64_t u = units * part / parts; u < u_end;) {
          const int64_t image = u / blocks, b0 = u % blocks, b1 = std::min(blocks, b0 + (u_end - u));
          DepthwiseInt8Channels p;
          p.x = xb + image * channels * in_plane;
          p.w = wc.data();
          p.bias = q.bias;
          p.multiplier = q.multiplier.data();
          p.x_zero_point = q.x_zp;
          p.y_zero_point = q.y_zp;
          p.q_min = q.q_min;
          p.q_max = q.q_max;
          p.x_signed = q.x_signed;
          p.y_signed = q.y_signed;
          p.y = yb + image * channels * out_plane;
          kernel(g, p, b0 * block, std::min(channels, b1 * block), scratch + per_part * static_cast<size_t>(part));
          u += b1 - b0;
        }
      }
    });
  }

  ConvInputs in_ = kQLinearConv;
  std::unique_ptr<Kernel> reference_;
  WeightRows weights_;
  std::vector<int32_t> depthwise_w_;  // [C x KH*KW], w - w_zp, when W and w_zp are constant
  bool depthwise_w_int8_ = false;     // every depthwise_w_ value fits int8
  WindowGeometry plan_geometry_;
};

}  // namespace

void register_nn_qlinear_conv(KernelRegistry& r) {
  r.add({.domain = "", .op_type = "QLinearConv", .since_opset = 10, .types = DTypeSet{DType::U8, DType::I8},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/qlinearconv_u8s8",
         .factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
           return QLinearConvKernel::create(init, kQLinearConv);
         }});
  r.add({.domain = "", .op_type = "ConvInteger", .since_opset = 10, .types = DTypeSet{DType::U8, DType::I8},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/convinteger_u8s8",
         .factory = [](const KernelInit& init) -> Result<std::unique_ptr<Kernel>> {
           return QLinearConvKernel::create(init, kConvInteger);
         }});
}

}  // namespace ignis::kernels::x86
