// SPDX-License-Identifier: Apache-2.0
// Integer GEMM for quantized models: C = (A - za) * (B - zb), A uint8 [M x K], B int8 or uint8
// [K x N] packed once, accumulated exactly in int32, then stored as int32 (MatMulInteger) or
// as float32 scaled per row / column plus a bias (MatMulIntegerToFloat, dynamic quantization),
// or requantized to uint8 / int8 (QLinearConv, QLinearMatMul).
//
// Two tile implementations share the packed layout: AVX-512 VNNI (vpdpbusd: 64 u8 x s8
// products summed four at a time into int32, exact) and AVX2 (for int8 A, vpmaddubsw on B as
// uint8 with A's unsafe pairs split off (Int8PairSplit), or on |B| with A carrying B's signs;
// for uint8 A, each quad widened to int16 and multiplied with vpmaddwd: see
// gemm_int8_avx2.cc; vpmaddubsw on uint8 A would saturate when two large products meet). uint8 B is stored as b - 128 so all see int8; the
// shift, and the zero points, come back as one correction per output:
//   sum_k (a - za_i)(b - zb_j) = sum_k a (b - off) + (off - zb_j) sum_k a - za_i (sum_k b - K zb_j)
// where off is 128 for uint8 B and 0 for int8 B. A signed int8 A is flipped to uint8 by the
// caller (a + 128, with za + 128), which the same identity absorbs.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/thread_pool.h"

namespace ignis::kernels::x86 {

// Columns per packed panel and the depth unit of one vpdpbusd lane.
inline constexpr int kInt8PanelCols = 32;
inline constexpr int kInt8Quad = 4;

// op(B) [K x N] packed for the int8 GEMM: panel p holds columns [32p, 32p + 32), as
// ceil(K / 4) quads of 32 columns x 4 consecutive depths (byte (q, j, r) at q * 128 + j * 4 + r),
// zero past K and past N. Immutable once packed; shareable across threads.
class PackedInt8B {
 public:
  PackedInt8B() = default;
  // B holds int8 (is_unsigned false) or uint8 values, row-major [K x N] with leading dimension
  // ld, or [N x K] when `trans`.
  static PackedInt8B pack(const void* b, bool is_unsigned, int64_t k, int64_t n, int64_t ld, bool trans);
  // A view of a buffer the caller packed (int8_pack_rows) and owns, for as long as it lives:
  // `data` holds ceil(n / 32) panels of ceil(k / 4) quads, `col_sums` at least n entries.
  static PackedInt8B view(int8_t* data, int32_t* col_sums, bool is_unsigned, int64_t k, int64_t n);

  bool empty() const { return !data_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t quads() const { return (k_ + kInt8Quad - 1) / kInt8Quad; }
  int64_t panels() const { return (n_ + kInt8PanelCols - 1) / kInt8PanelCols; }
  bool is_unsigned() const { return unsigned_; }
  const int8_t* panel(int64_t p) const { return data_.get() + p * quads() * kInt8Quad * kInt8PanelCols; }
  // sum_k b[k][j] of the original (unshifted) values, per column.
  const int32_t* column_sums() const { return col_sums_.get(); }

 private:
  int64_t k_ = 0, n_ = 0;
  bool unsigned_ = false;
  std::shared_ptr<int8_t> data_;
  std::shared_ptr<int32_t> col_sums_;
};

// A made safe for the AVX2 tile, which multiplies B's bytes as uint8 (0..255) by A's as int8
// with vpmaddubsw, adding each adjacent pair in int16 and saturating past 32767. A pair of A's
// values is safe when both are in int8's range, its positive values sum to at most 128 and its
// negative ones to at least -128 (255 * 128 = 32640). `main` holds each pair's safe part (the
// values clamped, then the second moved so that the pair sums to +-128); what is left is
// listed per row as quads of their own (`quad`: the index, `word`: the 4 bytes, the same quad
// again while something is left), each safe too: the tile runs one more step for that row.
// Random per-channel int8 weights have 1-7% of their pairs unsafe; dynamically quantized
// activations, taken less their zero point, few (their outliers).
struct Int8PairSplit {
  // False when splitting would not pay (too many quads listed, e.g. activations bunched at one
  // end of the int8 range): then nothing is listed, and `main` holds A as given when A is int8
  // without offsets (the tile multiplies it with vpsignb instead: four vector instructions per
  // 32 multiply-adds against three); otherwise the split cannot be used.
  bool split = true;
  int64_t i0 = 0;              // the row of A that main's first row is
  int64_t ld = 0;              // main's leading dimension: K rounded up to whole quads
  std::vector<int8_t> main;    // [rows x ld], zero past K
  std::vector<int32_t> sums;   // per row, sum_k of the values split
  std::vector<int32_t> start;  // row r's extra quads are [start[r], start[r + 1])
  std::vector<int32_t> quad, word;
};

// Splits rows [i0, i1) of A (depth k, leading dimension lda), uint8 (is_unsigned) or int8 bytes,
// whose values are each byte less its row's offset (offsets[i]; null: 0), into `out`. AVX2
// (gemm_int8_split_avx2.cc).
void int8_split_rows(const uint8_t* a, bool is_unsigned, const int32_t* offsets, int64_t lda, int64_t k, int64_t i0,
                     int64_t i1, Int8PairSplit& out);
// The same for int8 A as it is.
void int8_split_pairs(const int8_t* a, int64_t lda, int64_t k, int64_t i0, int64_t i1, Int8PairSplit& out);

// One integer GEMM. The zero-point correction per output is
//   row_sum[i] * col_shift[j] - row_zp[i] * col_corr[j]
// (col_shift = off - zb, col_corr = sum_k b - K zb; see the file comment), where row_sum may be
// null when every col_shift is 0, and row_zp null when A's zero point is 0.
struct Int8GemmArgs {
  int64_t m = 0;
  const uint8_t* a = nullptr;  // [M x K], leading dimension lda
  int64_t lda = 0;
  // A given indirectly, read instead of `a` by backends with `indirect_a` (a convolution's rows
  // read in place, without an im2col copy): row i's depths [t * D, (t + 1) * D), D = K / a_taps
  // a multiple of 4, are the D bytes at a_table[t * a_table_stride + i]. Entries for i in
  // [m, m + 5) must point at D readable bytes too: a tile computes whole groups of rows and
  // stores only the valid ones. Only the column-offset corrections apply (no row_zp, row_sum).
  const uint8_t* const* a_table = nullptr;
  int64_t a_taps = 0, a_table_stride = 0;
  const PackedInt8B* b = nullptr;
  const int32_t* row_zp = nullptr;     // [M] or null
  const int32_t* row_sum = nullptr;    // [M] or null
  const int32_t* col_shift = nullptr;  // [N] or null
  const int32_t* col_corr = nullptr;   // [N]; read only when row_zp is set
  // [N] or null: added to every row's sum after the corrections. A caller whose A zero point is
  // one value z may pass -z * sum_k b instead of row_zp and col_corr, with the per-row
  // remainder of the correction in q_bias (one add per output instead of a multiply).
  const int32_t* col_offset = nullptr;
  // A as int8 values in [-127, 127] ([M x K], leading dimension lda), read instead of `a` by
  // backends with `signed_a` (the AVX2 vpmaddubsw tile): the sums are then of these values,
  // and the corrections above take them as A (row_sum their row sums, row_zp in their domain).
  const int8_t* a_signed = nullptr;
  // With a_signed: entries of A held one step nearer zero than their value (int8_signed_rows:
  // -128 held as -127, or with a_fix_up 128 as 127), per row i the depths
  // a_fix_k[a_fix_start[i] .. a_fix_start[i + 1]); the tile takes B's row k off (adds it, with
  // a_fix_up) once for each. Null when there are none.
  // With a_signed, for the AVX2 tile: its rows split once (int8_split_pairs over at least the
  // rows each call runs), e.g. constant weights at session creation; null: split per call.
  // The tile then reads A only from it: a_signed, still set to choose the signed path, need
  // not hold A's values.
  const Int8PairSplit* a_split = nullptr;
  const int32_t* a_fix_start = nullptr;
  const int32_t* a_fix_k = nullptr;
  bool a_fix_up = false;
  // Output: int32 when c_i32 is set; requantized uint8 / int8 when c_q is set (below); else
  // float32 c_f32 = acc * row_scale[i] * col_scale[j] + bias[j] (row_scale and bias may be
  // null; col_scale is required).
  int32_t* c_i32 = nullptr;
  float* c_f32 = nullptr;
  int64_t ldc = 0;
  const float* row_scale = nullptr;
  const float* col_scale = nullptr;
  const float* bias = nullptr;
  // Requantized output, as the reference QLinearConv / QLinearMatMul compute it (onnxruntime's
  // arithmetic, requantize_avx2.h):
  //   c_q[i][j] = clamp(round_half_even(fl32(float(acc + q_bias[i]) * m)) + q_zero_point, q_min, q_max)
  // with m = q_row_scale[i] or q_col_scale[j] (exactly one is set); stored as int8 when
  // q_signed, else uint8. q_min above the type's minimum folds a Relu (clamp at the zero point).
  void* c_q = nullptr;
  bool q_signed = false;
  const int32_t* q_bias = nullptr;  // [M] or null
  const float* q_row_scale = nullptr;
  const float* q_col_scale = nullptr;
  int32_t q_zero_point = 0, q_min = 0, q_max = 255;
};

// One tile implementation: rows [i0, i1) x panels [p0, p1) of C on the calling thread.
struct Int8GemmBackend {
  std::string_view name;
  void (*range)(const Int8GemmArgs& args, int64_t i0, int64_t i1, int64_t p0, int64_t p1) = nullptr;
  // Takes Int8GemmArgs::a_signed, and runs faster with it than with uint8 A.
  bool signed_a = false;
  // Takes Int8GemmArgs::a_table.
  bool indirect_a = false;
};

const Int8GemmBackend& int8_gemm_backend_avx2();
const Int8GemmBackend& int8_gemm_backend_vnni();
// AVX-512 VNNI where the CPU has it and IGNIS_KERNELS allows AVX-512, else AVX2.
const Int8GemmBackend& int8_gemm_backend_default();

// The whole GEMM, split over `pool` by column panels (or rows when there are few panels).
// Each thread walks its panels in chunks that fit in L2 (int8_panels_per_chunk), running every
// row block over one chunk before the next, so B is read from memory once.
void gemm_u8s8(const Int8GemmArgs& args, ThreadPool* pool, const Int8GemmBackend& backend = int8_gemm_backend_default());

// Panels of depth k per chunk of B kept in L2 (~256 KB), even and at least 2.
int64_t int8_panels_per_chunk(int64_t k);

// Packs a [k x n] matrix of uint8 (is_unsigned) or int8 values whose row r is the n bytes at
// rows[r] + col0 into the PackedInt8B panel layout at `out` (ceil(n / 32) panels; columns past
// n and depths past k are stored as 0) and writes the column sums of the original values to
// col_sums[0, n) (none when col_sums is null). AVX2 (gemm_int8_pack_avx2.cc).
void int8_pack_rows(const uint8_t* const* rows, int64_t col0, int64_t k, int64_t n, bool is_unsigned, int8_t* out,
                    int32_t* col_sums);

// A [M x K] (uint8 less 128, or int8: values v in [-128, 127]) into `out` as int8 v + shift for
// Int8GemmArgs::a_signed, where the returned shift is 0 or 1, whichever leaves fewer values
// outside [-127, 127] (v = -128 with shift 0, v = 127 with shift 1: a dynamically quantized
// row's minimum or maximum); those are held one step nearer zero (Int8GemmArgs::a_fix_*), and
// per row their number goes to held[i]. AVX2 (gemm_int8_pack_avx2.cc).
int int8_signed_rows(const uint8_t* a, bool is_unsigned, int64_t m, int64_t k, int8_t* out, int32_t* held);

// sum_k a[i][k] for each row of a [M x K] uint8 matrix (leading dimension lda).
void int8_row_sums(const uint8_t* a, int64_t m, int64_t k, int64_t lda, int32_t* out);

}  // namespace ignis::kernels::x86
