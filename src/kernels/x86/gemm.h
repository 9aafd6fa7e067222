// SPDX-License-Identifier: Apache-2.0
// Single-precision GEMM for x86, the engine of the x86 MatMul, Gemm and Conv kernels:
//   C = act(alpha * op(A) * op(B) + beta * C + bias_scale * bias)
// Two implementations share this interface (GemmBackend): AVX2/FMA with a 4x24 register tile
// (gemm_avx2.cc) and AVX-512 with an 8x32 tile (gemm_avx512.cc); variants of them take
// bfloat16 operands (gemm_avx512bf16.cc) or IEEE half B panels (gemm_f16w_*.cc). Each ISA's
// tile code lives in a file built with that ISA's flags; the thread split and the
// packed-weight container live in gemm.cc (built without ISA flags, so only code that runs
// after the CPU check said yes ever executes vector instructions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/activation.h"
#include "core/thread_pool.h"
#include "kernels/kernel.h"

namespace ignis::kernels::x86 {

// The AVX2 register tile: kGemmMr rows x kGemmNr columns of C held in 12 ymm accumulators,
// and the depth of one packed block (see gemm_avx2.cc for how it was chosen). The AVX-512
// backend has its own (GemmBackend::mr, nr, kc); code that must work with either reads them
// from the backend.
inline constexpr int kGemmMr = 4;
inline constexpr int kGemmNr = 24;
inline constexpr int64_t kGemmKc = 384;

// The activations of the ai.ignis fused ops (docs/ops_ai_ignis.md, "Activations").
// The epilogue's activations are ignis::Activation (core/activation.h).

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

struct GemmArgs;

// One sgemm implementation: its register tile (mr x nr), the depth of its packed blocks (kc)
// and its entry points. Packed layouts (below) depend on mr, nr and kc, so an operand packed
// for one backend is only ever multiplied by that backend.
struct GemmBackend {
  std::string_view name;  // e.g. "avx512_8x32"
  Isa isa = Isa::Avx2;
  int mr = 0, nr = 0;
  int64_t kc = 0;
  // Bytes per element of its packed B panels: 4 (float32), or 2 where B is stored as IEEE half
  // (the element offsets of the layout below are then counted in halves).
  int b_bytes = 4;
  // Rows [i0, i1) x columns [j0, j1) of C on the calling thread (i0 a multiple of mr, j0 of nr).
  void (*range)(const GemmArgs& args, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) = nullptr;
  // Floats of workspace one thread needs to run any part of `args`.
  size_t (*thread_workspace)(const GemmArgs& args) = nullptr;
  // op(X)[i0 : i0 + mc, p0 : p0 + kc] (A side) or op(X)[p0 : p0 + kc, j0 : j0 + nc] (B side)
  // of a plain row-major matrix, written to `dst` in the packed layouts below.
  void (*pack_a)(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                 float* dst) = nullptr;
  void (*pack_b)(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                 float* dst) = nullptr;
};

const GemmBackend& gemm_backend_avx2();
const GemmBackend& gemm_backend_avx512();
// bfloat16 products summed in float32 (vdpbf16ps); for prepacked weights of sessions that run
// in bfloat16. Requires AVX512_BF16; see gemm_avx512bf16.cc for what it does not take.
const GemmBackend& gemm_backend_avx512bf16();
// Float32 arithmetic on B panels stored as IEEE half (rounded to nearest even when packed,
// widened by vcvtph2ps as the tile loads them), for the prepacked weights of MatMul and Gemm
// in sessions of precision F16: the weights stream at half the bytes. Same tiles as
// gemm_backend_avx512 / gemm_backend_avx2; the A side packs float32. Requires F16C (implied by
// both ISAs here).
const GemmBackend& gemm_backend_f16w_avx512();
const GemmBackend& gemm_backend_f16w_avx2();
// The backend for a kernel's prepacked weights at `precision`: bfloat16 where asked for and
// the CPU has AVX512_BF16 (and IGNIS_KERNELS allows AVX-512), else gemm_backend_default().
// Precision::F16 is for B-side MatMul/Gemm weights only (gemm_backend_for_b_weights), so
// here it is gemm_backend_default(): convolutions run as in a float32 session.
const GemmBackend& gemm_backend_for(Precision precision);
// The backend for the prepacked B weights of a MatMul, Gemm or FusedMatMul kernel registered
// on `own` at `precision`: the half-weight variant of `own` for F16 (AVX-512 or AVX2, as
// `own`), gemm_backend_for(precision) for the AVX-512 backend otherwise, else `own`.
const GemmBackend& gemm_backend_for_b_weights(const GemmBackend& own, Precision precision);
// The widest backend this CPU runs and IGNIS_KERNELS allows (AVX-512, else AVX2).
const GemmBackend& gemm_backend_default();

// An operand packed once (weights), immutable and shareable across threads. A-side packing
// holds op(A) [rows x cols] as mr-row panels, B-side packing holds op(B) [rows x cols] as
// nr-column panels; both are split into kc-deep blocks along the GEMM depth and zero-padded
// to whole panels (mr, nr, kc of the backend it was packed for):
//   A: block p0 at p0 * rows_pad, panel of row i0 at + i0 * kc, element (i, p) at + p * mr + i
//   B: block p0 at p0 * cols_pad, panel of col j0 at + j0 * kc, element (p, j) at + p * nr + j
// (offsets in elements: floats, or halves for a backend with b_bytes == 2).
// The ISA files only read a PackedMatrix through its accessors (one load each); it is built,
// copied and destroyed (shared_ptr reference counting, inline) only in files without ISA
// flags, so no ISA file emits those members for the linker to share (tools/check_isa_linkage.py).
class PackedMatrix {
 public:
  enum class Side { A, B };
  PackedMatrix() = default;
  // Packs op(X) where X is row-major with leading dimension ld and op transposes when `trans`.
  static PackedMatrix pack(Side side, int64_t rows, int64_t cols, const float* x, int64_t ld, bool trans,
                           const GemmBackend& backend = gemm_backend_default());

  bool empty() const { return !data_; }
  Side side() const { return side_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const float* data() const { return data_.get(); }
  // The B panels of a backend with b_bytes == 2.
  const uint16_t* halves() const { return reinterpret_cast<const uint16_t*>(data_.get()); }
  // Bytes of packed storage (padding included).
  size_t bytes() const { return bytes_; }
  const GemmBackend& backend() const { return *backend_; }

 private:
  Side side_ = Side::A;
  int64_t rows_ = 0, cols_ = 0;
  size_t bytes_ = 0;
  const GemmBackend* backend_ = nullptr;
  std::shared_ptr<float> data_;
};

// For a B operand: writes op(B)[p0 : p0 + kc, j0 : j0 + nc] in the packed B layout of
// `backend` (panels of nr columns, dst[(j / nr) * kc * nr + p * nr + j % nr], zero-padded to
// whole panels). For an A operand, the same with rows: op(A)[j0 : j0 + nc, p0 : p0 + kc] in
// panels of mr rows, dst[(i / mr) * kc * mr + p * mr + i % mr]. Used for operands that are
// never materialized, e.g. im2col of a Conv input.
using GemmPackFn = void (*)(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                            int64_t nc, float* dst);

// One GEMM operand: a plain row-major matrix (data, ld, trans), a prepacked one, or a packing
// callback.
struct GemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const PackedMatrix* packed = nullptr;
  GemmPackFn pack_fn = nullptr;
  const void* pack_ctx = nullptr;
};

struct GemmArgs {
  // The implementation: that of the prepacked operand when there is one, else this one,
  // else gemm_backend_default().
  const GemmBackend* backend = nullptr;
  int64_t m = 0, n = 0, k = 0;
  GemmOperand a, b;
  float* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is written without being read (NaN in C does not leak)
  GemmEpilogue epilogue;
};

// The backend that runs `args` (see GemmArgs::backend).
const GemmBackend& gemm_backend_of(const GemmArgs& args);

// Floats of workspace one thread needs to run any part of `args` (64-byte aligned).
size_t gemm_f32_thread_workspace(const GemmArgs& args);

// Computes the rows [i0, i1) x columns [j0, j1) of C on the calling thread; i0 must be a
// multiple of the backend's mr and j0 of its nr. `workspace` holds gemm_f32_thread_workspace
// floats.
void gemm_f32_range(const GemmArgs& args, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace);

// Whole GEMM split over `pool` (static partition of rows or columns, whichever packs less
// twice). `workspace` holds gemm_f32_workspace(args, threads) floats, threads being the
// pool's thread count (1 without a pool).
size_t gemm_f32_workspace(const GemmArgs& args, int threads);
void gemm_f32(const GemmArgs& args, ThreadPool* pool, float* workspace);

// Applies the epilogue to n contiguous values of row `row` of C starting at column `col0`:
// v = act(v + bias_scale * bias[row, col0 + j] + residual[row, col0 + j]). Requires AVX2.
void gemm_f32_apply_epilogue(const GemmEpilogue& e, int64_t row, int64_t col0, int64_t n, float* v);

}  // namespace ignis::kernels::x86
