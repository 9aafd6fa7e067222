// SPDX-License-Identifier: Apache-2.0
// x86 com.microsoft MatMulNBits (4-bit block-quantized weights; layout and algebra in
// matmul_nbits.h). Constant B, scales and zero points are repacked once when the kernel is made;
// a run then takes one of two paths:
//  - int8 (accuracy_level 4, at most kNbitsInt8Rows rows of A, the batch-1 decoding case):
//    A quantized per K block to int8, products summed in int32 by vpdpbusd (AVX-512 VNNI)
//    or vpmaddubsw (AVX2), columns split over the pool;
//  - exact float rows (other accuracy levels, at most kNbitsFloatRows rows): the codes turned
//    into floats in registers and multiplied with A unrounded, columns split over the pool;
//  - float (otherwise): the float32 GEMM with B dequantized panel by panel into its packed
//    layout (matmul_nbits_pack_b_avx2), so W is never held in float32 as a whole.
// Weights that are not constants run on the reference kernel.
#include "kernels/x86/matmul_nbits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// Rows of A up to which accuracy_level 4 takes the int8 path: beyond, the float GEMM's
// register tile reuses each dequantized weight across rows and wins (matmul_nbits_bench).
constexpr int64_t kNbitsInt8Rows = 4;
// Rows of A up to which the other accuracy levels multiply the codes in registers (exact path)
// instead of dequantizing B into the GEMM's panels on every run.
constexpr int64_t kNbitsFloatRows = 4;

class MatMulNBitsKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<MatMulNBitsKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->fallback_,
                           make_reference_kernel("com.microsoft", "MatMulNBits", init, DType::F32));
    const auto constant = [&](size_t i) { return i < init.constants.size() ? init.constants[i] : nullptr; };
    const bool zp_given = init.input_dtypes.size() > 3 && init.input_dtypes[3] != DType::Undefined;
    if (constant(1) == nullptr || constant(2) == nullptr || (zp_given && constant(3) == nullptr))
      return std::unique_ptr<Kernel>(std::move(k));
    k->int8_ = init.attrs.get_int("accuracy_level", 0) == 4;
    k->repack(init.attrs, *constant(1), *constant(2), zp_given ? constant(3) : nullptr);
    return std::unique_ptr<Kernel>(std::move(k));
  }

  bool uses_constant_data(int input) const override { return !(packed() && input >= 1 && input <= 3); }

  Status run(KernelContext& ctx) const override {
    if (!packed()) return fallback_->run(ctx);
    Tensor& y = ctx.output(0);
    const int64_t rows = ctx.input(0).numel() / w_.k;
    if (rows == 0) return Status::ok();
    const float* a = ctx.input(0).data_as<float>();
    const float* bias = ctx.has_input(5) ? ctx.input(5).data_as<float>() : nullptr;
    float* out = y.data_as<float>();
    if (int8_ && rows <= kNbitsInt8Rows) {
      run_int8(ctx, a, rows, bias, out);
      return Status::ok();
    }
    if (rows <= kNbitsFloatRows) {
      run_float_rows(ctx, a, rows, bias, out);
      return Status::ok();
    }
    GemmArgs g;
    g.m = rows;
    g.n = w_.n;
    g.k = w_.k;
    g.a = {.data = a, .ld = w_.k};
    g.b = {.pack_fn = matmul_nbits_pack_b_avx2, .pack_ctx = &w_};
    g.c = out;
    g.ldc = w_.n;
    if (bias != nullptr) g.epilogue = {.bias = bias, .bias_rs = 0, .bias_cs = 1};
    const int threads = ctx.pool() ? ctx.pool()->threads() : 1;
    auto* ws = static_cast<float*>(ctx.scratch(gemm_f32_workspace(g, threads) * sizeof(float)));
    gemm_f32(g, ctx.pool(), ws);
    return Status::ok();
  }

 private:
  bool packed() const { return w_.codes != nullptr; }

  // B [N, blocks, block / 2] (codes along K, low nibble first) into the layout of matmul_nbits.h.
  void repack(const AttrMap& attrs, const Tensor& b, const Tensor& scales, const Tensor* zero_points) {
    w_.k = attrs.get_int("K", 0);
    w_.n = attrs.get_int("N", 0);
    w_.block = attrs.get_int("block_size", 0);
    w_.blocks = (w_.k + w_.block - 1) / w_.block;
    w_.groups = (w_.n + kNbitsGroupCols - 1) / kNbitsGroupCols;
    const int64_t cells = w_.groups * w_.blocks * kNbitsGroupCols;  // (group, block, column) entries
    const size_t code_bytes = static_cast<size_t>(cells * w_.block / 2);
    const size_t scale_bytes = align_up(static_cast<size_t>(cells) * sizeof(float));
    buffer_ = make_aligned_buffer(code_bytes + scale_bytes + static_cast<size_t>(cells));
    auto* base = static_cast<uint8_t*>(buffer_.get());
    std::memset(base, 0, code_bytes + scale_bytes + static_cast<size_t>(cells));
    auto* codes = base;
    auto* scale = reinterpret_cast<float*>(base + code_bytes);
    auto* zero = base + code_bytes + scale_bytes;
    const uint8_t* src = b.data_as<uint8_t>();
    const float* s = scales.data_as<float>();
    const uint8_t* zp = zero_points ? zero_points->data_as<uint8_t>() : nullptr;
    const int64_t zp_row = (w_.blocks + 1) / 2;
    for (int64_t col = 0; col < w_.n; ++col) {
      const int64_t g = col / kNbitsGroupCols, j = col % kNbitsGroupCols;
      for (int64_t blk = 0; blk < w_.blocks; ++blk) {
        const int64_t cell = (g * w_.blocks + blk) * kNbitsGroupCols + j;
        scale[cell] = s[col * w_.blocks + blk];
        zero[cell] = zp ? static_cast<uint8_t>(blk % 2 == 0 ? zp[col * zp_row + blk / 2] & 0x0F
                                                             : zp[col * zp_row + blk / 2] >> 4)
                        : 8;
        const uint8_t* in = src + (col * w_.blocks + blk) * (w_.block / 2);
        uint8_t* chunk = codes + (g * w_.blocks + blk) * (w_.block / 8) * kNbitsChunkBytes;
        const int64_t depth = std::min(w_.block, w_.k - blk * w_.block);  // codes past K stay 0
        for (int64_t i = 0; i < depth; ++i) {
          const int code = (i % 2 == 0 ? in[i / 2] & 0x0F : in[i / 2] >> 4);
          uint8_t& byte = chunk[(i / 8) * kNbitsChunkBytes + 4 * j + i % 4];
          byte = static_cast<uint8_t>(byte | (i % 8 < 4 ? code : code << 4));
        }
      }
    }
    w_.codes = codes;
    w_.scale = scale;
    w_.zero = zero;
  }

  // Quantizes `rows` rows of A per K block into scratch, then runs the int8 tiles.
  void run_int8(KernelContext& ctx, const float* a, int64_t rows, const float* bias, float* y) const {
    const int64_t kpad = w_.blocks * w_.block;
    const size_t aq_bytes = align_up(static_cast<size_t>(rows * kpad));
    const size_t scale_bytes = align_up(static_cast<size_t>(rows * w_.blocks) * sizeof(float));
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(aq_bytes + scale_bytes + static_cast<size_t>(rows * w_.blocks) * 4));
    auto* aq = reinterpret_cast<int8_t*>(scratch);
    auto* scale = reinterpret_cast<float*>(scratch + aq_bytes);
    auto* sum = reinterpret_cast<int32_t*>(scratch + aq_bytes + scale_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t blk = 0; blk < w_.blocks; ++blk) {
        const float* x = a + r * w_.k + blk * w_.block;
        int8_t* q = aq + r * kpad + blk * w_.block;
        const int64_t depth = std::min(w_.block, w_.k - blk * w_.block);
        float max_abs = 0.0f;
        for (int64_t i = 0; i < depth; ++i) max_abs = std::max(max_abs, std::fabs(x[i]));
        const float s = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
        const float inv = 1.0f / s;
        int32_t total = 0;
        for (int64_t i = 0; i < depth; ++i) {
          q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] * inv), -127.0f, 127.0f));
          total += q[i];
        }
        std::fill(q + depth, q + w_.block, static_cast<int8_t>(0));
        scale[r * w_.blocks + blk] = s;
        sum[r * w_.blocks + blk] = total;
      }
    }
    const Int8Rows rows_q{.rows = rows, .aq = aq, .scale = scale, .sum = sum};
    const bool vnni = isa_enabled(Isa::Avx512) && cpu_features().avx512vnni && cpu_features().avx512bw;
    const auto tiles = vnni ? matmul_nbits_int8_vnni : matmul_nbits_int8_avx2;
    // ~8 groups per part: below that a second thread costs more than it saves.
    parallel_for(ctx.pool(), w_.groups, 8, [&](int64_t g0, int64_t g1) {
      tiles(w_, rows_q, bias, y, w_.n, g0, g1);
    });
  }

  // Copies `rows` rows of A into scratch, zero-padded to whole blocks, with their per-block
  // sums, then runs the float tiles (matmul_nbits.h, FloatRows).
  void run_float_rows(KernelContext& ctx, const float* a, int64_t rows, const float* bias, float* y) const {
    const int64_t kpad = w_.blocks * w_.block;
    const size_t a_bytes = align_up(static_cast<size_t>(rows * kpad) * sizeof(float));
    auto* scratch = static_cast<uint8_t*>(ctx.scratch(a_bytes + static_cast<size_t>(rows * w_.blocks) * sizeof(float)));
    auto* padded = reinterpret_cast<float*>(scratch);
    auto* sum = reinterpret_cast<float*>(scratch + a_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy_n(a + r * w_.k, w_.k, padded + r * kpad);
      std::fill(padded + r * kpad + w_.k, padded + (r + 1) * kpad, 0.0f);
      for (int64_t blk = 0; blk < w_.blocks; ++blk) {
        const float* x = padded + r * kpad + blk * w_.block;
        float total = 0.0f;
        for (int64_t i = 0; i < w_.block; ++i) total += x[i];
        sum[r * w_.blocks + blk] = total;
      }
    }
    const FloatRows rows_f{.rows = rows, .a = padded, .sum = sum};
    const bool avx512 = isa_enabled(Isa::Avx512) && cpu_features().avx512f;
    const auto tiles = avx512 ? matmul_nbits_float_rows_avx512 : matmul_nbits_float_rows_avx2;
    parallel_for(ctx.pool(), w_.groups, 8, [&](int64_t g0, int64_t g1) {
      tiles(w_, rows_f, bias, y, w_.n, g0, g1);
    });
  }

  std::unique_ptr<Kernel> fallback_;
  std::shared_ptr<void> buffer_;
  Int4Weights w_;
  bool int8_ = false;
};

}  // namespace

void register_nn_matmul_nbits(KernelRegistry& r) {
  r.add({.domain = "com.microsoft", .op_type = "MatMulNBits", .since_opset = 1, .types = DTypeSet{DType::F32},
         .isa = Isa::Avx2, .priority = 10, .id = "x86/matmulnbits_q4", .factory = MatMulNBitsKernel::create});
}

}  // namespace ignis::kernels::x86
