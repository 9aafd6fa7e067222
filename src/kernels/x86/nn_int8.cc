// SPDX-License-Identifier: Apache-2.0
// x86 MatMulInteger, ai.ignis MatMulIntegerToFloat and QLinearMatMul on the int8 GEMM
// (gemm_int8.h), and the registration of the AVX2 quantization kernels (quantize_avx2.cc,
// quantize_linear_avx2.cc, quantize_add_avx2.cc).
// A constant B (the weights of a quantized model) is packed once when the kernel is made,
// with its zero-point corrections when b_zero_point is constant too; a B computed at run time
// is packed per run. A's batch dimensions fold into the GEMM's rows against a 2-D B; a B with
// A's batch dimensions (both operands activations) runs one GEMM per batch entry, packing
// each with the run-time row packer. Configurations the GEMM does not take (a broadcast batched B, zero points shaped per
// batch, float16 scales) run on the reference kernel. QLinearMatMul requantizes in the GEMM's epilogue with one multiplier per
// column, a_scale * b_scale[j] / y_scale, computed as the reference computes it; MatMulIntegerToFloat's
// optional row scale (per-row dynamic quantization) multiplies each row in the same epilogue.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/strings.h"
#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/quantize_avx2.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// Input positions of the two ops.
struct Inputs {
  int a = 0, b = 1, scale = -1, a_zp = 2, b_zp = 3, bias = -1, row_scale = -1;
  int a_scale = -1, b_scale = -1, y_scale = -1, y_zp = -1;  // QLinearMatMul
};
constexpr Inputs kMatMulInteger{};
constexpr Inputs kToFloat{.a = 0, .b = 1, .scale = 2, .a_zp = 3, .b_zp = 4, .bias = 5, .row_scale = 6};
constexpr Inputs kQLinear{.a = 0, .b = 3, .a_zp = 2, .b_zp = 5, .a_scale = 1, .b_scale = 4, .y_scale = 6, .y_zp = 7};

// The per-column corrections of B for zero point zb (one value or one per column).
struct ColumnTerms {
  std::vector<int32_t> shift;  // off - zb_j; empty when all 0
  std::vector<int32_t> corr;   // sum_k b_j - K zb_j
};

ColumnTerms column_terms(const PackedInt8B& b, const Tensor* zp) {
  ColumnTerms t;
  const int64_t n = b.n();
  const int32_t off = b.is_unsigned() ? 128 : 0;
  t.corr.resize(static_cast<size_t>(n));
  std::vector<int32_t> shift(static_cast<size_t>(n));
  bool any_shift = false;
  for (int64_t j = 0; j < n; ++j) {
    const int32_t zb = zero_point_entry(zp, j);
    t.corr[static_cast<size_t>(j)] = b.column_sums()[j] - static_cast<int32_t>(b.k()) * zb;
    shift[static_cast<size_t>(j)] = off - zb;
    any_shift |= off != zb;
  }
  if (any_shift) t.shift = std::move(shift);
  return t;
}

// A as int8 for a backend that takes signed A (int8_signed_rows), with the values it holds one
// step nearer zero listed per row: fix_start [M + 1] offsets into fix_k. None (values null)
// when more than 1 in 32 would be (each costs a pass over a row of B in the tile).
struct SignedRows {
  const int8_t* values = nullptr;
  int shift = 0;
  std::vector<int32_t> fix_k;
};

SignedRows signed_rows(const uint8_t* a, bool a_int8, int64_t rows, int64_t k, int8_t* out, int32_t* fix_start) {
  SignedRows r;
  r.shift = int8_signed_rows(a, !a_int8, rows, k, out, fix_start + 1);
  fix_start[0] = 0;
  for (int64_t i = 0; i < rows; ++i) fix_start[i + 1] += fix_start[i];
  if (int64_t{fix_start[rows]} * 32 > rows * k) return SignedRows{};
  // The held values: v = -128 (shift 0) or 127 (shift 1), v being a - 128 for uint8 A.
  const uint8_t held = static_cast<uint8_t>((r.shift ? 127 : -128) ^ (a_int8 ? 0 : 0x80));
  r.fix_k.reserve(static_cast<size_t>(fix_start[rows]));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t kk = 0; kk < k && fix_start[i + 1] > fix_start[i]; ++kk)
      if (a[i * k + kk] == held) r.fix_k.push_back(static_cast<int32_t>(kk));
  r.values = out;
  return r;
}

bool is_vector_of(const Tensor& t, int64_t n) { return t.numel() == 1 || (t.rank() == 1 && t.dim(0) == n); }

// B [k x n] (row-major) computed at run time, packed by the AVX2 row packer (int8_pack_rows)
// into one buffer, panels then column sums, that `owner` keeps alive.
PackedInt8B pack_at_run_time(const uint8_t* b, bool is_unsigned, int64_t k, int64_t n, std::shared_ptr<void>& owner) {
  const int64_t panels = (n + kInt8PanelCols - 1) / kInt8PanelCols, quads = (k + kInt8Quad - 1) / kInt8Quad;
  const size_t data_bytes = align_up(static_cast<size_t>(panels * quads * kInt8Quad * kInt8PanelCols));
  owner = make_aligned_buffer(data_bytes + static_cast<size_t>(panels * kInt8PanelCols) * sizeof(int32_t));
  auto* data = static_cast<int8_t*>(owner.get());
  auto* sums = reinterpret_cast<int32_t*>(data + data_bytes);
  std::vector<const uint8_t*> rows(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) rows[static_cast<size_t>(r)] = b + r * n;
  int8_pack_rows(rows.data(), 0, k, n, is_unsigned, data, sums);
  return PackedInt8B::view(data, sums, is_unsigned, k, n);
}

class Int8MatMulKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const Inputs& in, std::string_view domain,
                                                std::string_view op) {
    auto k = std::make_unique<Int8MatMulKernel>();
    k->in_ = in;
    IGNIS_ASSIGN_OR_RETURN(k->fallback_, make_reference_kernel(domain, op, init, init.input_dtypes[0]));
    const auto constant = [&](int i) -> const Tensor* {
      return i >= 0 && static_cast<size_t>(i) < init.constants.size() ? init.constants[static_cast<size_t>(i)] : nullptr;
    };
    const Tensor* b = constant(in.b);
    const bool b_zp_given = static_cast<size_t>(in.b_zp) < init.input_dtypes.size() &&
                            init.input_dtypes[static_cast<size_t>(in.b_zp)] != DType::Undefined;
    const Tensor* b_zp = constant(in.b_zp);
    if (b && b->rank() == 2 && (b->dtype() == DType::U8 || b->dtype() == DType::I8)) {
      k->packed_b_ = PackedInt8B::pack(b->data(), b->dtype() == DType::U8, b->dim(0), b->dim(1), b->dim(1), false);
      if (!b_zp_given || (b_zp && is_vector_of(*b_zp, b->dim(1)))) {
        k->terms_ = column_terms(k->packed_b_, b_zp);
        k->terms_ready_ = true;
      }
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  bool uses_constant_data(int input) const override { return input != in_.b || packed_b_.empty(); }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(in_.a);
    const Tensor& b = ctx.input(in_.b);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return Status::ok();
    if (!takes(ctx)) {
      if (!packed_b_.empty()) return internal_error("MatMulInteger: prepacked B but the GEMM cannot take this call");
      return fallback_->run(ctx);
    }
    const int64_t k = a.dim(a.rank() - 1);
    const int64_t n = b.dim(b.rank() - 1);
    if (k == 0) {
      if (y.dtype() == DType::I32) std::fill_n(y.data_as<int32_t>(), y.numel(), 0);
      else return fallback_->run(ctx);
      return Status::ok();
    }
    if (b.rank() == 2) {
      run_gemm(ctx, static_cast<const uint8_t*>(a.data()), a.numel() / k, b.data(), static_cast<uint8_t*>(y.data()));
      return Status::ok();
    }
    // A batched B (both operands activations: attention's products), batch dims equal to A's:
    // one GEMM per batch entry, B packed for each.
    const int64_t m = a.dim(a.rank() - 2), batches = b.numel() / (k * n);
    const size_t y_elem = dtype_size(y.dtype());
    for (int64_t i = 0; i < batches; ++i)
      run_gemm(ctx, static_cast<const uint8_t*>(a.data()) + i * m * k, m,
               static_cast<const uint8_t*>(b.data()) + i * k * n,
               static_cast<uint8_t*>(y.data()) + static_cast<size_t>(i * m * n) * y_elem);
    return Status::ok();
  }

 private:
  // The GEMM of `rows` rows of A at a_bytes (k columns) by B (b_data, [k x n], unless packed
  // already) into y_data, with the zero points, scales and bias of ctx's inputs.
  void run_gemm(KernelContext& ctx, const uint8_t* a_bytes, int64_t rows, const void* b_data, uint8_t* y_data) const {
    const Tensor& a = ctx.input(in_.a);
    const Tensor& b = ctx.input(in_.b);
    const Tensor& y = ctx.output(0);
    const int64_t k = a.dim(a.rank() - 1);
    const int64_t n = b.dim(b.rank() - 1);

    // B: prepacked, or packed now.
    PackedInt8B packed_now;
    std::shared_ptr<void> packed_buf;
    const PackedInt8B* pb = &packed_b_;
    if (packed_b_.empty()) {
      packed_now = pack_at_run_time(static_cast<const uint8_t*>(b_data), b.dtype() == DType::U8, k, n, packed_buf);
      pb = &packed_now;
    }
    ColumnTerms terms_now;
    const ColumnTerms* terms = &terms_;
    if (!terms_ready_) {
      terms_now = column_terms(*pb, has(ctx, in_.b_zp) ? &ctx.input(in_.b_zp) : nullptr);
      terms = &terms_now;
    }

    // A as uint8 (int8 flipped to a + 128, its zero point moved by 128 too), or, for a backend
    // that takes signed A, as int8 (int8_signed_rows: uint8 less 128, plus its shift; the zero
    // point likewise), the few values held one step nearer zero listed for the tile.
    const bool a_int8 = a.dtype() == DType::I8;
    const size_t copy_bytes = align_up(static_cast<size_t>(rows * k));
    const size_t zp_bytes = align_up(static_cast<size_t>(rows) * sizeof(int32_t));
    const size_t fix_bytes = align_up(static_cast<size_t>(rows + 1) * sizeof(int32_t));
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(copy_bytes + 2 * zp_bytes + fix_bytes));
    auto* row_zp = reinterpret_cast<int32_t*>(scratch + copy_bytes);
    auto* row_sum = reinterpret_cast<int32_t*>(scratch + copy_bytes + zp_bytes);
    auto* fix_start = reinterpret_cast<int32_t*>(scratch + copy_bytes + 2 * zp_bytes);
    // For the AVX2 tile, first A less its zero point, split into vpmaddubsw-safe pairs
    // (Int8PairSplit): so centered, activations have few unsafe pairs (their outliers) wherever
    // the zero point sits, where taken as int8 less 128, those bunched at one end of the range
    // (after a GELU, or beside an outlier feature) have nearly all of theirs unsafe.
    thread_local Int8PairSplit centered;
    const bool signed_a = int8_gemm_backend_default().signed_a;
    a_zero_points(ctx, a, rows, row_zp);
    if (signed_a) int8_split_rows(a_bytes, !a_int8, row_zp, k, k, 0, rows, centered);
    const bool is_centered = signed_a && centered.split;
    SignedRows sa;
    const uint8_t* au = a_bytes;
    bool any_zp = false;
    if (!is_centered) {
      if (signed_a) sa = signed_rows(a_bytes, a_int8, rows, k, reinterpret_cast<int8_t*>(scratch), fix_start);
      if (!sa.values && a_int8) {
        for (int64_t i = 0; i < rows * k; ++i) scratch[i] = a_bytes[i] ^ 0x80u;
        au = scratch;
      }
      const int32_t zp_shift = sa.values ? (a_int8 ? 0 : -128) + sa.shift : (a_int8 ? 128 : 0);
      for (int64_t i = 0; i < rows; ++i) {
        row_zp[i] += zp_shift;
        any_zp |= row_zp[i] != 0;
      }
      if (!terms->shift.empty()) {
        if (sa.values) {  // sums of the values A stands for (a held one is one step off)
          for (int64_t i = 0; i < rows; ++i) {
            int32_t sum = 0;
            for (int64_t kk = 0; kk < k; ++kk) sum += static_cast<int32_t>(sa.values[i * k + kk]);
            const int32_t held = fix_start[i + 1] - fix_start[i];
            row_sum[i] = sum + (sa.shift ? held : -held);
          }
        } else {
          int8_row_sums(au, rows, k, k, row_sum);
        }
      }
    }

    Int8GemmArgs g;
    g.m = rows;
    g.a = au;
    g.a_signed = sa.values;
    g.a_fix_start = sa.fix_k.empty() ? nullptr : fix_start;
    g.a_fix_k = sa.fix_k.empty() ? nullptr : sa.fix_k.data();
    g.a_fix_up = sa.shift == 1;
    g.lda = k;
    g.b = pb;
    g.row_zp = any_zp ? row_zp : nullptr;
    g.row_sum = terms->shift.empty() ? nullptr : row_sum;
    if (is_centered) {  // A's values are less their zero point already
      g.a_signed = centered.main.data();  // not read: the split stands for it
      g.a_split = &centered;
      g.row_sum = terms->shift.empty() ? nullptr : centered.sums.data();
    }
    g.col_shift = terms->shift.empty() ? nullptr : terms->shift.data();
    g.col_corr = terms->corr.data();
    g.ldc = n;
    std::vector<float> col_scale;
    if (y.dtype() == DType::I32) {
      g.c_i32 = reinterpret_cast<int32_t*>(y_data);
    } else if (in_.y_zp >= 0) {
      // Per column: a_scale * b_scale[j] / y_scale, in float32 as the reference computes it.
      const float as = ctx.input(in_.a_scale).data_as<float>()[0], ys = ctx.input(in_.y_scale).data_as<float>()[0];
      const Tensor& bs = ctx.input(in_.b_scale);
      col_scale.resize(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) col_scale[static_cast<size_t>(j)] = as * bs.data_as<float>()[bs.numel() == 1 ? 0 : j] / ys;
      const Tensor& yzp = ctx.input(in_.y_zp);
      g.c_q = y_data;
      g.q_signed = y.dtype() == DType::I8;
      g.q_col_scale = col_scale.data();
      g.q_zero_point = int8_entry(yzp, 0);
      g.q_min = g.q_signed ? -128 : 0;
      g.q_max = g.q_signed ? 127 : 255;
    } else {
      const Tensor& scale = ctx.input(in_.scale);
      if (scale.numel() == 1) {
        col_scale.assign(static_cast<size_t>(n), scale.data_as<float>()[0]);
        g.col_scale = col_scale.data();
      } else {
        g.col_scale = scale.data_as<float>();
      }
      g.bias = has(ctx, in_.bias) ? ctx.input(in_.bias).data_as<float>() : nullptr;
      // One entry per row of the flattened A (B is 2-D here: `takes` sends batched B elsewhere).
      g.row_scale = has(ctx, in_.row_scale) ? ctx.input(in_.row_scale).data_as<float>() : nullptr;
      g.c_f32 = reinterpret_cast<float*>(y_data);
    }
    gemm_u8s8(g, ctx.pool());
  }

  static bool has(const KernelContext& ctx, int i) { return i >= 0 && ctx.has_input(i); }

  // A's zero point per row of the flattened [rows x K] A (0 without one).
  void a_zero_points(const KernelContext& ctx, const Tensor& a, int64_t rows, int32_t* out) const {
    if (!has(ctx, in_.a_zp)) {
      std::fill_n(out, rows, 0);
      return;
    }
    const Tensor& zp = ctx.input(in_.a_zp);
    const int64_t m = a.rank() >= 2 ? a.dim(a.rank() - 2) : 1;
    for (int64_t i = 0; i < rows; ++i) out[i] = zero_point_entry(&zp, i % m);
  }

  // Whether the GEMM runs this call: B is 2-D, the zero points are one value or one per row of
  // a 2-D A (per column of B), and the scale is one value or one per column; or B is batched
  // with A's batch dims (no broadcasting) and every zero point and scale is one value.
  bool takes(const KernelContext& ctx) const {
    const Tensor& a = ctx.input(in_.a);
    const Tensor& b = ctx.input(in_.b);
    if (b.rank() < 2 || a.rank() < 1) return false;
    if (b.rank() > 2 && !batched_takes(ctx, a, b)) return false;
    const int64_t n = b.dim(b.rank() - 1);
    if (has(ctx, in_.a_zp)) {
      const Tensor& zp = ctx.input(in_.a_zp);
      if (zp.numel() != 1 && !(a.rank() >= 2 && zp.rank() == 1 && zp.dim(0) == a.dim(a.rank() - 2))) return false;
    }
    if (has(ctx, in_.b_zp) && !is_vector_of(ctx.input(in_.b_zp), n)) return false;
    if (in_.scale >= 0 && !is_vector_of(ctx.input(in_.scale), n)) return false;
    if (has(ctx, in_.bias) && !(ctx.input(in_.bias).rank() == 1 && ctx.input(in_.bias).dim(0) == n)) return false;
    if (has(ctx, in_.row_scale) &&
        (b.rank() != 2 || ctx.input(in_.row_scale).numel() * a.dim(a.rank() - 1) != a.numel()))
      return false;
    if (in_.y_zp >= 0) {
      for (int i : {in_.a_scale, in_.b_scale, in_.y_scale})
        if (ctx.input(i).dtype() != DType::F32) return false;
      if (ctx.input(in_.a_scale).numel() != 1 || ctx.input(in_.y_scale).numel() != 1 ||
          !is_vector_of(ctx.input(in_.b_scale), n))
        return false;
    }
    return true;
  }

  bool batched_takes(const KernelContext& ctx, const Tensor& a, const Tensor& b) const {
    if (a.rank() != b.rank()) return false;
    for (int i = 0; i + 2 < a.rank(); ++i)
      if (a.dim(i) != b.dim(i)) return false;
    if (a.dim(a.rank() - 1) != b.dim(b.rank() - 2)) return false;
    for (int i : {in_.a_zp, in_.b_zp, in_.scale, in_.a_scale, in_.b_scale, in_.y_scale})
      if (has(ctx, i) && ctx.input(i).numel() != 1) return false;
    return !has(ctx, in_.bias);
  }

  Inputs in_;
  std::unique_ptr<Kernel> fallback_;
  PackedInt8B packed_b_;
  ColumnTerms terms_;
  bool terms_ready_ = false;  // terms_ belong to packed_b_ and the (constant or absent) b_zero_point
};

Result<std::unique_ptr<Kernel>> create_matmul_integer(const KernelInit& init) {
  return Int8MatMulKernel::create(init, kMatMulInteger, "", "MatMulInteger");
}
Result<std::unique_ptr<Kernel>> create_matmul_integer_to_float(const KernelInit& init) {
  return Int8MatMulKernel::create(init, kToFloat, "ai.ignis", "MatMulIntegerToFloat");
}
Result<std::unique_ptr<Kernel>> create_qlinear_matmul(const KernelInit& init) {
  return Int8MatMulKernel::create(init, kQLinear, "", "QLinearMatMul");
}

}  // namespace

void register_nn_int8(KernelRegistry& r) {
  const DTypeSet q{DType::U8, DType::I8};
  r.add({.domain = "", .op_type = "MatMulInteger", .since_opset = 10, .types = q, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/matmulinteger_u8s8", .factory = create_matmul_integer});
  r.add({.domain = "ai.ignis", .op_type = "MatMulIntegerToFloat", .since_opset = 1, .types = q, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/matmulintegertofloat_u8s8", .factory = create_matmul_integer_to_float});
  r.add({.domain = "", .op_type = "QLinearMatMul", .since_opset = 10, .types = q, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/qlinearmatmul_u8s8", .factory = create_qlinear_matmul});
  r.add({.domain = "", .op_type = "DynamicQuantizeLinear", .since_opset = 11, .types = DTypeSet{DType::F32},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/dynamicquantizelinear_avx2", .fn = dynamic_quantize_linear_avx2});
  r.add({.domain = "ai.ignis", .op_type = "DynamicQuantizeRows", .since_opset = 1, .types = DTypeSet{DType::F32},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/dynamicquantizerows_avx2", .fn = dynamic_quantize_rows_avx2});
  r.add({.domain = "", .op_type = "QuantizeLinear", .since_opset = 10, .types = DTypeSet{DType::F32}, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/quantizelinear_avx2", .factory = create_quantize_linear_avx2});
  r.add({.domain = "", .op_type = "DequantizeLinear", .since_opset = 10, .types = q, .isa = Isa::Avx2, .priority = 10,
         .id = "x86/dequantizelinear_avx2", .factory = create_dequantize_linear_avx2});
  r.add({.domain = "com.microsoft", .op_type = "QLinearAdd", .since_opset = 1, .types = q, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/qlinearadd_avx2", .factory = create_qlinear_add_avx2});
  r.add({.domain = "com.microsoft", .op_type = "QLinearMul", .since_opset = 1, .types = q, .isa = Isa::Avx2,
         .priority = 10, .id = "x86/qlinearmul_avx2", .factory = create_qlinear_mul_avx2});
  r.add({.domain = "com.microsoft", .op_type = "QLinearGlobalAveragePool", .since_opset = 1, .types = q,
         .isa = Isa::Avx2, .priority = 10, .id = "x86/qlinearglobalaveragepool_avx2",
         .factory = create_qlinear_global_average_pool_avx2});
}

int32_t int8_entry(const Tensor& t, int64_t i) {
  return t.dtype() == DType::U8 ? static_cast<int32_t>(t.data_as<uint8_t>()[i])
                                : static_cast<int32_t>(t.data_as<int8_t>()[i]);
}

int32_t zero_point_entry(const Tensor* zp, int64_t i) { return zp ? int8_entry(*zp, zp->numel() == 1 ? 0 : i) : 0; }

}  // namespace ignis::kernels::x86
