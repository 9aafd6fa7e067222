// SPDX-License-Identifier: Apache-2.0
// The x86 com.microsoft MatMulNBits (4-bit weights): the weight layout it repacks B into once,
// and the two ways it multiplies (matmul_nbits.cc chooses).
//
// Repacked layout (Int4Weights): columns in groups of 16; per group and K block, block / 8
// chunks of 64 bytes. Byte 4j + r of chunk c of (group g, block b) holds column 16g + j, with the
// code of k = b * block + 8c + r in its low nibble and of k + 4 in its high nibble (r < 4). A
// 64-byte load then gives, after `& 0x0F` and `>> 4 & 0x0F`, the two operands of vpdpbusd for 16
// columns x 4 depths each: 16 int32 lanes, lane j summing four code x int8 products of column j.
// AVX2 reads the same chunk as two 32-byte halves (columns 0-7 and 8-15) with vpmaddubsw (a code
// is at most 15, so the pairwise int16 sums, at most 2 * 15 * 127, cannot saturate) and vpmaddwd.
// Scales (float) and zero points (uint8) follow per (group, block) as 16 entries; columns past N
// have scale 0, depths past K code 0.
//
// Int8 path (accuracy_level 4, a few rows of A): each row of A is quantized per K block to int8
// with scale s = max|a| / 127, so per block and column
//   sum_k a_k (q_k - zp) scale ~= s * scale * (sum_k aq_k q_k - zp * sum_k aq_k)
// exact in int32 up to the rounding of A. Otherwise (float path) B is dequantized panel by panel
// into the float GEMM's packed layout as (q - zp) * scale, as the reference forms it.
#pragma once

#include <cstdint>

#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

inline constexpr int kNbitsGroupCols = 16;
inline constexpr int kNbitsChunkBytes = 64;

// A view of repacked weights (owned by the kernel).
struct Int4Weights {
  int64_t k = 0, n = 0, block = 0, blocks = 0, groups = 0;
  const uint8_t* codes = nullptr;  // groups * blocks * (block / 8) chunks of 64 bytes
  const float* scale = nullptr;    // [groups][blocks][16]
  const uint8_t* zero = nullptr;   // [groups][blocks][16]
  const uint8_t* chunk(int64_t g, int64_t b) const { return codes + (g * blocks + b) * (block / 8) * kNbitsChunkBytes; }
};

namespace {  // internal linkage: the ISA translation units each instantiate their own copy

// Calls f.template operator()<R>() with R = rows for 1..3 and R = 4 otherwise: the small-M
// tiles are templates on their row count (rows <= 4).
template <class F>
void with_row_count(int64_t rows, F&& f) {
  switch (rows) {
    case 1: f.template operator()<1>(); break;
    case 2: f.template operator()<2>(); break;
    case 3: f.template operator()<3>(); break;
    default: f.template operator()<4>(); break;
  }
}

}  // namespace

// A few rows of A quantized per K block (see the file comment): row r's codes at
// aq + r * blocks * block (zero past K), its scales and code sums at + r * blocks.
struct Int8Rows {
  int64_t rows = 0;
  const int8_t* aq = nullptr;
  const float* scale = nullptr;
  const int32_t* sum = nullptr;
};

// Y[r][16g + j] for r < rows and groups [g0, g1), on the calling thread: the int8 path. Y has
// leading dimension ldy and N columns (only those are written); bias may be null. rows <= 4.
void matmul_nbits_int8_avx2(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy,
                            int64_t g0, int64_t g1);
void matmul_nbits_int8_vnni(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy,
                            int64_t g0, int64_t g1);

// A few rows of A in float32 for the exact small-M path: row r at a + r * blocks * block (zero
// past K, so the codes' padding multiplies zeros), and per K block the sum of its entries at
// sum + r * blocks.
struct FloatRows {
  int64_t rows = 0;
  const float* a = nullptr;
  const float* sum = nullptr;
};

// Y[r][16g + j] for r < rows and groups [g0, g1) in float32 without rounding A (the accuracy
// level 0 case at batch 1, a few rows): per block and column s * (sum_k a_k code_k - zp * sum_k
// a_k), the codes unpacked to float in registers, so the weights are read as 4-bit codes, never
// dequantized to memory. Same contract as matmul_nbits_int8_*; rows <= 4.
void matmul_nbits_float_rows_avx2(const Int4Weights& w, const FloatRows& a, const float* bias, float* y, int64_t ldy,
                                  int64_t g0, int64_t g1);
void matmul_nbits_float_rows_avx512(const Int4Weights& w, const FloatRows& a, const float* bias, float* y,
                                    int64_t ldy, int64_t g0, int64_t g1);

// GemmPackFn for the float path: `ctx` is an Int4Weights; writes W^T[p0 : p0 + kc, j0 : j0 + nc]
// dequantized into the B-side packed layout of `backend`. Requires AVX2.
void matmul_nbits_pack_b_avx2(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                              int64_t nc, float* dst);

}  // namespace ignis::kernels::x86
