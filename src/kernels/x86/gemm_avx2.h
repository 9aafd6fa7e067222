// SPDX-License-Identifier: Apache-2.0
// Single-precision GEMM for x86 AVX2/FMA, the engine of the x86 MatMul, Gemm and Conv kernels:
//   C = act(alpha * op(A) * op(B) + beta * C + bias_scale * bias)
// The tile code lives in gemm_avx2.cc (built with -mavx2 -mfma); the thread split and the
// packed-weight container live in gemm.cc (built without ISA flags, so only code that runs
// after isa_available(Isa::Avx2) said yes ever executes AVX instructions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/thread_pool.h"

namespace ignis::kernels::x86 {

// Register tile: kGemmMr rows x kGemmNr columns of C held in 12 ymm accumulators.
inline constexpr int kGemmMr = 4;
inline constexpr int kGemmNr = 24;
// Depth of one packed block. Prepacked operands are laid out in blocks of this depth, so it
// is fixed at build time (see gemm_avx2.cc for how it was chosen).
inline constexpr int64_t kGemmKc = 384;

// The activations of the ai.ignis fused ops (docs/ops_ai_ignis.md, "Activations").
enum class Activation { None, Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, SiLU, Gelu, GeluTanh };

// What happens to a finished C tile, in this order: C = alpha * acc + beta * C_old;
// C += bias_scale * bias[i * bias_rs + j * bias_cs]; C += residual[i * residual_ld + j];
// C = act(C). bias_cs is 0 (one value per row) or 1 (a row vector, or a full matrix with
// bias_rs = its leading dimension). A per-output-channel conv bias is {bias, 1, 0}; a
// MatMul+Add bias is {bias, 0, 1}; a residual is a matrix shaped like C (FusedConv's Z).
struct GemmEpilogue {
  const float* bias = nullptr;
  int64_t bias_rs = 0;
  int64_t bias_cs = 0;
  float bias_scale = 1.0f;
  const float* residual = nullptr;
  int64_t residual_ld = 0;
  Activation act = Activation::None;
  float act_lo = 0.0f;     // Clip lower bound
  float act_hi = 0.0f;     // Clip upper bound
  float act_alpha = 0.0f;  // LeakyRelu slope, HardSigmoid alpha
  float act_beta = 0.0f;   // HardSigmoid beta
};

// An operand packed once (weights), immutable and shareable across threads. A-side packing
// holds op(A) [rows x cols] as kGemmMr-row panels, B-side packing holds op(B) [rows x cols]
// as kGemmNr-column panels; both are split into kGemmKc-deep blocks along the GEMM depth
// and zero-padded to whole panels:
//   A: block p0 at p0 * rows_pad, panel of row i0 at + i0 * kc, element (i, p) at + p * kGemmMr + i
//   B: block p0 at p0 * cols_pad, panel of col j0 at + j0 * kc, element (p, j) at + p * kGemmNr + j
class PackedMatrix {
 public:
  enum class Side { A, B };
  PackedMatrix() = default;
  // Packs op(X) where X is row-major with leading dimension ld and op transposes when `trans`.
  static PackedMatrix pack(Side side, int64_t rows, int64_t cols, const float* x, int64_t ld, bool trans);

  bool empty() const { return !data_; }
  Side side() const { return side_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const float* data() const { return data_.get(); }

 private:
  Side side_ = Side::A;
  int64_t rows_ = 0, cols_ = 0;
  std::shared_ptr<float> data_;
};

// Writes op(B)[p0 : p0 + kc, j0 : j0 + nc] in packed B layout (panels of kGemmNr columns,
// dst[(j / kGemmNr) * kc * kGemmNr + p * kGemmNr + j % kGemmNr], zero-padded to whole
// panels). Used for B operands that are never materialized, e.g. im2col of a Conv input.
using GemmPackFn = void (*)(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst);

// One GEMM operand: a plain row-major matrix (data, ld, trans), a prepacked one, or, for B
// only, a packing callback.
struct GemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const PackedMatrix* packed = nullptr;
  GemmPackFn pack_fn = nullptr;
  const void* pack_ctx = nullptr;
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  GemmOperand a, b;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is written without being read (NaN in C does not leak)
  GemmEpilogue epilogue;
};

// Floats of workspace one thread needs to run any part of `args` (64-byte aligned).
size_t gemm_f32_thread_workspace(const GemmArgs& args);

// Computes the rows [i0, i1) x columns [j0, j1) of C on the calling thread; i0 must be a
// multiple of kGemmMr and j0 of kGemmNr. `workspace` holds gemm_f32_thread_workspace floats.
// Requires AVX2 + FMA.
void gemm_f32_range(const GemmArgs& args, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace);

// Whole GEMM split over `pool` (static partition of rows or columns, whichever packs less
// twice). `workspace` holds gemm_f32_workspace(args, threads) floats, threads being the
// pool's thread count (1 without a pool). Requires AVX2 + FMA.
size_t gemm_f32_workspace(const GemmArgs& args, int threads);
void gemm_f32(const GemmArgs& args, ThreadPool* pool, float* workspace);

// Packs op(X)[p0 : p0 + kc, j0 : j0 + nc] (B side) or op(X)[i0 : i0 + mc, p0 : p0 + kc] (A
// side) of a plain row-major matrix into `dst` in the layouts above. Requires AVX2.
void gemm_f32_pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst);
void gemm_f32_pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst);

// Applies the epilogue to n contiguous values of row `row` of C starting at column `col0`:
// v = act(v + bias_scale * bias[row, col0 + j] + residual[row, col0 + j]). Requires AVX2.
void gemm_f32_apply_epilogue(const GemmEpilogue& e, int64_t row, int64_t col0, int64_t n, float* v);

}  // namespace ignis::kernels::x86
